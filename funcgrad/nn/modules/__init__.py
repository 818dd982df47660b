"""The layers of ``funcgrad.nn``."""
from funcgrad.nn.modules.activation import *  # noqa: F403
from funcgrad.nn.modules.container import *  # noqa: F403
from funcgrad.nn.modules.conv import *  # noqa: F403
from funcgrad.nn.modules.dropout import *  # noqa: F403
from funcgrad.nn.modules.linear import *  # noqa: F403
from funcgrad.nn.modules.loss import *  # noqa: F403
from funcgrad.nn.modules.module import Module as Module
from funcgrad.nn.modules.normalization import *  # noqa: F403
from funcgrad.nn.modules.pooling import *  # noqa: F403
from funcgrad.nn.modules.sparse import *  # noqa: F403
