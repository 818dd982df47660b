"""The op table's public functions, gathered from ``funcgrad.ops.derivatives``.

Each function takes Tensors, arrays or scalars: given a Tensor it returns a Tensor (recording a
node when needed); given only arrays it returns the NumPy result. Importing this package also
installs the Tensor methods and the engine's gradient space (``funcgrad.ops.install``).
"""
from funcgrad.ops.aliases import *  # noqa: F403
from funcgrad.ops.compositions import *  # noqa: F403
from funcgrad.ops.derivatives.elementwise import *  # noqa: F403
from funcgrad.ops.derivatives.indexing import *  # noqa: F403
from funcgrad.ops.derivatives.linalg import *  # noqa: F403
from funcgrad.ops.derivatives.linear import *  # noqa: F403
from funcgrad.ops.derivatives.nn import *  # noqa: F403
from funcgrad.ops.derivatives.reduction import *  # noqa: F403
from funcgrad.ops.derivatives.shape import *  # noqa: F403
from funcgrad.ops.derivatives.views import *  # noqa: F403
from funcgrad.ops.install import install
from funcgrad.ops.joins import *  # noqa: F403
from funcgrad.ops.registry import COMPOSITES, OPS
from funcgrad.ops.selections import *  # noqa: F403
from funcgrad.ops.sorting import *  # noqa: F403
from funcgrad.ops.tensor_methods import *  # noqa: F403

install()

__all__ = sorted(OPS) + sorted(COMPOSITES)
