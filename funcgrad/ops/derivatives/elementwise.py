"""Derivatives of elementwise ops: one defop entry per op.

A rule maps the output gradient to the gradient of one input. Names a rule may use:
  g            gradient w.r.t. the op's output (may carry leading batch dimensions)
  out          the op's result (read only)
  x, y, ...    the op's inputs, named as in its public signature; <name>_shape for a shape only
Rules use funcgrad ops (F.*) and operators only, never `.data`, so with create_graph=True their own
graph is recorded and higher derivatives need nothing more. A rule may return its gradient in the
broadcast shape; the engine sums it to the input's shape. Only the names a rule mentions are saved.

Complex values (PyTorch's convention, for every table file): the gradient of a real loss L of z is
dL/dRe(z) + i dL/dIm(z), so a holomorphic rule is ``g * conj(f'(z))`` (``F.conj`` of a real value is the
value itself: real paths pay nothing); a real input fed into a complex op gets the real part. Forward
mode gives ``f'(z) t`` without conj (``ELEMENTWISE`` takes ``conj(vjp(conj(t)))``). Ops listed in each
file's ``allow_complex(...)`` support complex values; the others raise rather than give a wrong gradient.

Kinks and NaN follow PyTorch where NumPy's conventions differ:
  relu'(0) = 0, relu'(nan) = 1      abs'(0) = abs'(nan) = 0, as sign(nan) = 0 (NumPy: nan)
  maximum/minimum: g/2 each on ties; where a NaN makes the comparison false, both inputs get g
  atan2 at (0, 0): both partials 0     clamp: 1 at the bounds, 0 at NaN
  clamp(x, min, max) with max < min is max, and max's gradient is g there (torch's rule for the bounds)
  max()/min() over all elements with NaNs: g shared by the NaNs (torch.max(); torch.amax gives NaN)
  vector_norm / norm: 0 where x = 0 (any order, also p < 1) and where the norm is 0
  logaddexp(x, y): sigmoid(x - y) and sigmoid(y - x), so 1 and 0 at x = inf (exp(x - out) would be NaN)
"""
import math  # noqa: I001
from typing import Any

import numpy as np
import scipy.special as sp

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops import formulas as R
from funcgrad.ops import kernels as K
from funcgrad.ops.registry import ELEMENTWISE, LINEAR, NONDIFF, allow_complex, composite, defop, nondiff

LN2, LN10, SQRT_PI, TWO_OVER_SQRT_PI = math.log(2.0), math.log(10.0), math.sqrt(math.pi), 2.0 / math.sqrt(math.pi)

# ----- arithmetic -----------------------------------------------------------------------------
add       = defop("add",       np.add,         x=lambda g: g,         y=lambda g: g,  jvp=ELEMENTWISE)
sub       = defop("sub",       np.subtract,    x=lambda g: g,         y=lambda g: -g, jvp=ELEMENTWISE)
mul       = defop("mul",       np.multiply,    x=lambda g, y: R.times_conj(g, y), y=lambda g, x: R.times_conj(g, x), jvp=ELEMENTWISE)
div       = defop("div",       np.true_divide, x=lambda g, y: g / F.conj(y), y=lambda g, x, y: -g * F.conj(x / y / y), jvp=ELEMENTWISE)  # (not out: torch's, which may then be written in place)
neg       = defop("neg",       np.negative,    x=lambda g: -g,        jvp=ELEMENTWISE)
pow       = defop("pow",       np.power,       x=R.pow_base_grad,     y=R.pow_exponent_grad, jvp=ELEMENTWISE)
remainder = defop("remainder", np.remainder,   x=lambda g: g,         y=lambda g, x, y: -g * F.floor_divide(x, y), jvp=ELEMENTWISE)
reciprocal = defop("reciprocal", np.reciprocal, x=lambda g, out: g * -F.conj(F.square(out)), jvp=ELEMENTWISE)
floor_divide = nondiff("floor_divide", np.floor_divide)  # integer-valued steps: no gradient, as torch
fmod      = defop("fmod",      np.fmod,        x=lambda g: g,         y=lambda g, x, y: -g * F.trunc(x / y), jvp=ELEMENTWISE)
frac      = defop("frac",      K.frac,         x=lambda g: g,         jvp=ELEMENTWISE)

# ----- exponentials and logarithms ------------------------------------------------------------
exp   = defop("exp",   np.exp,   x=lambda g, out: g * F.conj(out),      jvp=ELEMENTWISE)
exp2  = defop("exp2",  K.exp2,   x=lambda g, out: g * F.conj(out * LN2), jvp=ELEMENTWISE)
expm1 = defop("expm1", np.expm1, x=lambda g, out: g * F.conj(out + 1),  jvp=ELEMENTWISE)
log   = defop("log",   np.log,   x=lambda g, x: g / F.conj(x),          jvp=ELEMENTWISE)
log2  = defop("log2",  np.log2,  x=lambda g, x: g / F.conj(x * LN2),    jvp=ELEMENTWISE)
log10 = defop("log10", np.log10, x=lambda g, x: g / F.conj(x * LN10),   jvp=ELEMENTWISE)
log1p = defop("log1p", np.log1p, x=lambda g, x: g / F.conj(x + 1),      jvp=ELEMENTWISE)
sqrt  = defop("sqrt",  np.sqrt,  x=lambda g, out: g / F.conj(2 * out),  jvp=ELEMENTWISE)
rsqrt = defop("rsqrt", K.rsqrt,  x=lambda g, out: -0.5 * g * F.conj(out ** 3), jvp=ELEMENTWISE)
cbrt  = defop("cbrt",  np.cbrt,  x=R.Scaled(lambda out: F.pow(out, -2) / 3), jvp=ELEMENTWISE)  # inf at 0, as JAX
square = defop("square", np.square, x=lambda g, x: 2 * g * F.conj(x),   jvp=ELEMENTWISE)
xlogy = defop("xlogy", K.xlogy, x=lambda g, x, y: F.where((x == 0) & (y <= 0), 0.0, F.xlogy(g, y)),  # 0 where x = 0,
                                 y=lambda g, x, y: g * x / y, jvp=ELEMENTWISE)                       # y <= 0, as torch
logaddexp = defop("logaddexp", np.logaddexp, x=lambda g, x, y: g * F.sigmoid(x - y),  # = exp(x - out), 1 at x = inf
                                             y=lambda g, x, y: g * F.sigmoid(y - x), jvp=ELEMENTWISE)
logaddexp2 = defop("logaddexp2", np.logaddexp2, x=lambda g, x, y: g * F.sigmoid((x - y) * LN2),
                                                y=lambda g, x, y: g * F.sigmoid((y - x) * LN2), jvp=ELEMENTWISE)

# ----- trigonometric and hyperbolic -----------------------------------------------------------
sin   = defop("sin",   np.sin,     x=R.Scaled(lambda x: F.cos(x)),                      jvp=ELEMENTWISE)
cos   = defop("cos",   np.cos,     x=R.Scaled(lambda x: -F.sin(x)),                     jvp=ELEMENTWISE)
tan   = defop("tan",   np.tan,     x=lambda g, out: g * F.conj(1 + out * out),          jvp=ELEMENTWISE)
asin  = defop("asin",  np.arcsin,  x=R.Scaled(lambda x: F.rsqrt(1 - F.square(x))),       jvp=ELEMENTWISE)
acos  = defop("acos",  np.arccos,  x=R.Scaled(lambda x: -F.rsqrt(1 - F.square(x))),      jvp=ELEMENTWISE)
atan  = defop("atan",  np.arctan,  x=lambda g, x: g / F.conj(1 + x * x),                jvp=ELEMENTWISE)
atan2 = defop("atan2", np.arctan2, x=lambda g, x, y: R.atan2_grad(g, y, x, y),   # 0 at (0, 0), as torch
                                   y=lambda g, x, y: R.atan2_grad(-g, x, x, y), jvp=ELEMENTWISE)
hypot = defop("hypot", np.hypot,  x=lambda g, x, out: g * x / out, y=lambda g, y, out: g * y / out, jvp=ELEMENTWISE)  # nan at 0, as torch
sinh  = defop("sinh",  np.sinh,    x=R.Scaled(lambda x: F.cosh(x)),                     jvp=ELEMENTWISE)
cosh  = defop("cosh",  np.cosh,    x=R.Scaled(lambda x: F.sinh(x)),                     jvp=ELEMENTWISE)
tanh  = defop("tanh",  np.tanh,    x=lambda g, out: F.tanh_backward(g, out),             jvp=ELEMENTWISE)
# g * conj(1 - y^2) as one op, as torch: 1 node per tanh in a create_graph pass, not 3 (square, sub, mul);
# its partial in y is antiholomorphic (conj(y)), so its complex VJP and JVP conjugate as written
tanh_backward = defop("tanh_backward", K.tanh_backward,
                      grad_output=lambda g, output: F.tanh_backward(g, F.conj(output)),
                      output=lambda g, grad_output, output: -2 * F.conj(R.times_conj(g, grad_output) * output),
                      jvp=lambda grad_output_t, output_t, grad_output, output, out:
                          R.backward_jvp(F.tanh_backward, -2 * output, grad_output_t, output_t, grad_output, output, out))
asinh = defop("asinh", np.arcsinh, x=R.Scaled(lambda x: F.rsqrt(F.square(x) + 1)),       jvp=ELEMENTWISE)
acosh = defop("acosh", np.arccosh, x=R.Scaled(lambda x: F.rsqrt(x - 1) * F.rsqrt(x + 1)), jvp=ELEMENTWISE)
atanh = defop("atanh", np.arctanh, x=lambda g, x: g / F.conj(1 - x * x),                jvp=ELEMENTWISE)

# ----- activations, kinks and selections ------------------------------------------------------
sigmoid = defop("sigmoid", K.sigmoid, x=lambda g, out: F.sigmoid_backward(g, out), jvp=ELEMENTWISE)
# g * conj(y - y^2), as tanh_backward; -2y + 1 rather than 1 - 2y: a scalar added differentiates to no node,
# a subtraction from a scalar to a neg node
sigmoid_backward = defop("sigmoid_backward", K.sigmoid_backward,
                         grad_output=lambda g, output: F.sigmoid_backward(g, F.conj(output)),
                         output=lambda g, grad_output, output: F.conj(R.times_conj(g, grad_output) * (-2 * output + 1)),
                         jvp=lambda grad_output_t, output_t, grad_output, output, out:
                             R.backward_jvp(F.sigmoid_backward, -2 * output + 1, grad_output_t, output_t, grad_output, output,
                                            out))
relu    = defop("relu",    K.relu,    x=lambda g, out: F.where(F.le(out, 0), 0.0, g), jvp=ELEMENTWISE)  # 0 at 0
abs     = defop("abs",     np.abs,    x=lambda g, x: g * F.sgn(x), jvp=ELEMENTWISE)   # 0 at 0, as torch
sign    = defop("sign",    K.sign,    x=lambda g: R.zeros(g), jvp=ELEMENTWISE)        # zero grad, as torch
copysign = defop("copysign", np.copysign, x=lambda g, x, out: g * (F.sign(x) * F.sign(out)),  # 0 at x = 0; other's
                                         y=lambda g: R.zeros(g), jvp=ELEMENTWISE)                 # is 0, as torch
floor   = defop("floor",   np.floor,  x=lambda g: R.zeros(g), jvp=ELEMENTWISE)
ceil    = defop("ceil",    np.ceil,   x=lambda g: R.zeros(g), jvp=ELEMENTWISE)
round   = defop("round",   K.round,  x=lambda g: R.zeros(g), jvp=ELEMENTWISE)
trunc   = defop("trunc",   np.trunc,  x=lambda g: R.zeros(g), jvp=ELEMENTWISE)
maximum = defop("maximum", np.maximum, x=lambda g, x, y: R.tie_split(g, x, y, F.lt(x, y)),   # ties: g/2
                                       y=lambda g, x, y: R.tie_split(g, y, x, F.lt(y, x)),   # each, as torch
                                       jvp=ELEMENTWISE)
minimum = defop("minimum", np.minimum, x=lambda g, x, y: R.tie_split(g, x, y, F.gt(x, y)),
                                       y=lambda g, x, y: R.tie_split(g, y, x, F.gt(y, x)), jvp=ELEMENTWISE)
fmax    = defop("fmax",    np.fmax,   x=lambda g, x, y: R.select_grad(g, R.takes_first(x, y, F.ge)),  # ties: x, as torch;
                                      y=lambda g, x, y: R.select_grad(g, F.logical_not(R.takes_first(x, y, F.ge))),  # NaN loses
                                      jvp=ELEMENTWISE)
fmin    = defop("fmin",    np.fmin,   x=lambda g, x, y: R.select_grad(g, R.takes_first(x, y, F.le)),
                                      y=lambda g, x, y: R.select_grad(g, F.logical_not(R.takes_first(x, y, F.le))),
                                      jvp=ELEMENTWISE)
clamp   = defop("clamp",   K.clamp,   x=R.clamp_grad,                                   # 1 at the bounds, as torch
                           min=lambda g, x, min, max: R.clamp_bound_grad(g, x, min, max, True),
                           max=lambda g, x, max, min: R.clamp_bound_grad(g, x, max, min, False), jvp=ELEMENTWISE)
where   = defop("where",   K.where,   condition=NONDIFF,
                           x=lambda g, condition: R.select_grad(g, condition),
                           y=lambda g, condition: R.select_grad(g, F.logical_not(condition)), jvp=ELEMENTWISE)

# ----- complex numbers -------------------------------------------------------------------------
conj_physical = defop("conj_physical", np.conjugate, x=lambda g: F.conj(g), jvp=LINEAR)
real    = defop("real",    K.real,    x=lambda g: g,      jvp=LINEAR, view=True)  # views, as torch's: writes reach x
imag    = defop("imag",    K.imag,    x=lambda g: g * 1j, jvp=lambda x_t: F.imag(x_t) if R.is_complex(x_t) else R.zeros(x_t),
                view=True)
angle   = defop("angle",   K.angle,   x=R.angle_grad,     jvp=ELEMENTWISE)  # 0 at 0, as torch
sgn     = defop("sgn",     K.sign,    x=R.sgn_grad,       jvp=lambda x_t, x, out: R.sgn_grad(x_t, x, out))  # z / |z|
polar   = defop("polar",   K.polar,   abs=lambda g, angle: F.real(g * F.exp(angle * -1j)),
                                      angle=lambda g, out: F.real(g * F.conj(out * 1j)),
                                      jvp=R.polar_jvp)


@composite
def conj(x: Any) -> Any:
    """The complex conjugate; a real input is returned as it is (no copy, no node), as torch.

    Example:
        >>> import funcgrad as fg
        >>> fg.conj(fg.tensor([1 + 2j]))
        tensor([1.-2.j], dtype=complex128)
    """
    t = type(x)
    if t is np.ndarray:  # the hot paths of real rules (arrays, or Tensors under create_graph): a type check,
        return conj_physical(x) if x.dtype.kind == "c" else x  # no copy, no node
    if t is Tensor:
        return conj_physical(x) if x.data.dtype.kind == "c" else x
    if t is float or t is int:  # (checked before the try: an exception would cost a microsecond)
        return x
    try:
        kind = x.dtype.kind
    except AttributeError:
        return x.conjugate() if isinstance(x, complex) else x
    return conj_physical(x) if kind == "c" else x


# ----- special functions ----------------------------------------------------------------------
erf     = defop("erf",     sp.erf,     x=lambda g, x: g * TWO_OVER_SQRT_PI * F.exp(-x * x),  jvp=ELEMENTWISE)
erfc    = defop("erfc",    sp.erfc,    x=lambda g, x: -g * TWO_OVER_SQRT_PI * F.exp(-x * x), jvp=ELEMENTWISE)
lgamma  = defop("lgamma",  sp.gammaln, x=lambda g, x: g * F.digamma(x),                      jvp=ELEMENTWISE)
digamma = defop("digamma", sp.digamma, x=lambda g, x: g * F.polygamma(1, x),                 jvp=ELEMENTWISE)
erfinv  = defop("erfinv",  K.erfinv,  x=lambda g, out: g * (0.5 * SQRT_PI) * F.exp(F.square(out)),   jvp=ELEMENTWISE)
sinc    = defop("sinc",    np.sinc,    x=R.sinc_grad,                                            jvp=ELEMENTWISE)  # 0 at 0, as torch
polygamma = defop("polygamma", K.polygamma, x=lambda g, n, x: g * F.polygamma(n + 1, x),     jvp=ELEMENTWISE)

# ----- copying and overwriting (the functional forms of fill_ and copy_) --------------------------------
clone   = defop("clone",   K.clone,   x=lambda g: g, jvp=ELEMENTWISE)
to_copy = defop("to_copy", K.to_copy, x=lambda g: g, jvp=lambda x_t, dtype: F.to_copy(x_t, dtype))  # the engine casts g back to x's dtype
fill    = defop("fill",    K.fill,    x=lambda g: R.zeros(g), value=lambda g: g, jvp=ELEMENTWISE)
copy    = defop("copy",    K.copy,    x=lambda g: R.zeros(g), src=lambda g: g, jvp=ELEMENTWISE)

# ----- no derivative --------------------------------------------------------------------------
eq          = nondiff("eq", np.equal)
ne          = nondiff("ne", np.not_equal)
lt          = nondiff("lt", np.less)
le          = nondiff("le", np.less_equal)
gt          = nondiff("gt", np.greater)
ge          = nondiff("ge", np.greater_equal)
logical_and = nondiff("logical_and", np.logical_and)
logical_or  = nondiff("logical_or", np.logical_or)
logical_xor = nondiff("logical_xor", np.logical_xor)
logical_not = nondiff("logical_not", np.logical_not)
isnan       = nondiff("isnan", np.isnan)
isinf       = nondiff("isinf", np.isinf)
isfinite    = nondiff("isfinite", np.isfinite)

# ----- complex inputs (see the header) ----------------------------------------------------------
allow_complex(add, sub, mul, div, neg, pow, reciprocal, exp, exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt,
              square, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, tanh_backward, asinh, acosh, atanh, sigmoid,
              sigmoid_backward, abs, where,
              conj_physical, real, imag, angle, sgn, polar, clone, to_copy, fill, copy)
