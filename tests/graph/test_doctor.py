from cli.model import doctor
from config.settings import Settings


def test_doctor_checks_the_endpoint_without_printing_the_key(openai_server, tmp_path):
    settings = Settings(
        REACH_DATA_DIR=tmp_path,
        REACH_MODEL="fake-model",
        REACH_BASE_URL=openai_server.base_url,
        OPENAI_API_KEY="sk-very-secret-value",
    )
    report = doctor(settings)
    assert report["ok"] is True
    assert report["served_models"] == ["fake-model"]
    assert report["api_key"] == "set"
    assert "sk-very-secret-value" not in repr(report)


def test_doctor_reports_an_unreachable_endpoint(tmp_path):
    settings = Settings(
        REACH_DATA_DIR=tmp_path, REACH_MODEL="m", REACH_BASE_URL="http://127.0.0.1:9/v1"
    )
    report = doctor(settings)
    assert report["ok"] is False
    assert report["endpoint"].startswith("unreachable")
