from app.config import Settings


def test_every_setting_is_documented():
    undocumented = [
        name for name, field in Settings.model_fields.items() if not (field.description and len(field.description) > 10)
    ]
    assert undocumented == []


def test_builtin_is_the_default_without_key(monkeypatch):
    for var in ("VERITY_LLM_API_KEY", "VERITY_LLM_BASE_URL", "VERITY_LLM_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert Settings(_env_file=None).use_builtin


def test_openai_key_is_a_fallback(monkeypatch):
    monkeypatch.delenv("VERITY_LLM_API_KEY", raising=False)
    monkeypatch.delenv("VERITY_LLM_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings(_env_file=None)
    assert settings.llm_api_key == "sk-test" and not settings.use_builtin


def test_sqlite_lives_in_the_data_dir(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path)
    assert settings.sqlalchemy_url == f"sqlite:///{tmp_path / 'verity.db'}"
