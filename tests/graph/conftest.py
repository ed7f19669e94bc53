from tests.fakes.openai_server import openai_server  # noqa: F401
