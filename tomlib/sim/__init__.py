"""A simulated competent model for rehearsing the papers' scale: declared, seeded competence per kind of prompt
(engineers, PMs, debaters and judge, multiple-choice agents), served over real HTTP. Its rows are ``sim:<name>``,
never set beside the papers as a reproduction."""

from tomlib.sim._answers import NoRule, reply
from tomlib.sim._declared import expected_values
from tomlib.sim._server import SimServer
from tomlib.sim._spec import SimSpec

__all__ = ["NoRule", "SimServer", "SimSpec", "expected_values", "reply"]
