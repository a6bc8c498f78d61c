"""Entry module for Dramatiq's own CLI in production: `dramatiq workers.main`."""

from domain.kernel.settings import get_settings
from workers.broker import setup_broker

broker = setup_broker(get_settings())
