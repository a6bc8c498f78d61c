"""Every area's tables on the one metadata: imported where the whole schema must be known (migrations, the
processes' start-up, tests that wipe the database), never for side effects elsewhere."""

from domain.agents import models as agents
from domain.axiom import models as axiom
from domain.consensus import models as consensus
from domain.consensus import session_models as sessions
from domain.documents import models as documents
from domain.kernel import models as kernel
from domain.kernel.db import Base
from domain.market import models as market
from domain.people import models as people
from domain.topics import models as topics
from domain.work import models as work

metadata = Base.metadata
AREAS = (agents, axiom, consensus, sessions, documents, kernel, market, people, topics, work)
