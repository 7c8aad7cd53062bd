import json
import os
import stat

import pytest
from receco_agent import config
from receco_agent.config import ConfigError

from tests.agent.support import LIVE_KEY, TEST_KEY


def write(home, data):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(data))


def test_defaults_without_a_file(tmp_path):
    settings = config.load(tmp_path, env={})
    assert settings.home == tmp_path.resolve()
    assert settings.merchant_id is None
    assert settings.api_key is None
    assert settings.api_url == "http://127.0.0.1:8000/api"
    assert settings.web_url == "http://127.0.0.1:8000"
    assert settings.offline_mode is True
    assert settings.print_qr is True
    assert settings.port == 3001
    assert settings.log_level == "info"
    assert settings.queue_path == tmp_path.resolve() / "queue.sqlite3"


def test_home_comes_from_the_environment(tmp_path):
    assert config.resolve_home(env={"RECECO_AGENT_HOME": str(tmp_path)}) == tmp_path.resolve()


def test_home_defaults_to_the_user_config_dir():
    home = config.resolve_home(env={})
    assert home.name == "receco-agent"


def test_the_file_is_read(tmp_path):
    write(
        tmp_path,
        {
            "merchantId": "test-shop",
            "apiKey": TEST_KEY,
            "rececoApiUrl": "https://receco.example/api/",
            "rececoWebUrl": "https://receco.example",
            "enableOfflineMode": False,
            "printQRCodes": False,
            "port": 4001,
            "logLevel": "DEBUG",
        },
    )
    settings = config.load(tmp_path, env={})
    assert settings.merchant_id == "test-shop"
    assert settings.api_key == TEST_KEY
    assert settings.api_url == "https://receco.example/api"
    assert settings.procedure_url("getReceipt") == "https://receco.example/api/trpc/getReceipt"
    assert settings.receipt_url("rcpt_a_b") == "https://receco.example/app/receipt/rcpt_a_b"
    assert settings.offline_mode is False
    assert settings.print_qr is False
    assert settings.port == 4001
    assert settings.log_level == "debug"


def test_environment_overrides_the_file(tmp_path):
    write(tmp_path, {"merchantId": "test-file", "port": 4001, "enableOfflineMode": True})
    env = {
        "RECECO_MERCHANT_ID": "test-env",
        "RECECO_API_KEY": LIVE_KEY,
        "RECECO_API_URL": "http://10.0.0.5:8000/api",
        "RECECO_WEB_URL": "http://10.0.0.5:8000",
        "RECECO_OFFLINE_MODE": "off",
        "RECECO_PRINT_QR": "0",
        "RECECO_AGENT_PORT": "5005",
        "RECECO_LOG_LEVEL": "warning",
    }
    settings = config.load(tmp_path, env=env)
    assert (settings.merchant_id, settings.api_key) == ("test-env", LIVE_KEY)
    assert (settings.api_url, settings.web_url) == (
        "http://10.0.0.5:8000/api",
        "http://10.0.0.5:8000",
    )
    assert (settings.offline_mode, settings.print_qr) == (False, False)
    assert (settings.port, settings.log_level) == (5005, "warning")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"RECECO_AGENT_PORT": "abc"},
            "port (from environment variable RECECO_AGENT_PORT) must be an integer from 1 to 65535; got 'abc'",
        ),
        (
            {"RECECO_AGENT_PORT": "70000"},
            "port (from environment variable RECECO_AGENT_PORT) must be an integer from 1 to 65535; got '70000'",
        ),
        (
            {"RECECO_OFFLINE_MODE": "maybe"},
            "enableOfflineMode (from environment variable RECECO_OFFLINE_MODE) must be true or false; got 'maybe'",
        ),
        (
            {"RECECO_LOG_LEVEL": "loud"},
            "logLevel (from environment variable RECECO_LOG_LEVEL) must be one of debug, info, warning, error, "
            "critical; got 'loud'",
        ),
        (
            {"RECECO_API_URL": "ftp://x/api"},
            "rececoApiUrl (from environment variable RECECO_API_URL) must be an http:// or https:// URL such as "
            "http://127.0.0.1:8000/api; got 'ftp://x/api'",
        ),
        (
            {"RECECO_API_URL": "http://x/api/trpc"},
            "rececoApiUrl (from environment variable RECECO_API_URL) must be the parent of /trpc, such as "
            "http://x/api (procedures are called at <url>/trpc/<name>); got 'http://x/api/trpc'",
        ),
        (
            {"RECECO_API_KEY": "secret123"},
            "apiKey (from environment variable RECECO_API_KEY) must be a Receco API key starting with postest_ or "
            "poslive_ (made in the merchant dashboard: the API keys link of your shop), or empty for none; got "
            "'secret123'",
        ),
        (
            {"RECECO_MERCHANT_ID": "my shop"},
            "merchantId (from environment variable RECECO_MERCHANT_ID) must be a merchant id of 1 to 64 letters, "
            "digits, '.', '_' or '-', starting with a letter or digit, such as test-shop-1; got 'my shop'",
        ),
    ],
)
def test_invalid_environment_values_say_how_to_fix_them(tmp_path, env, message):
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env=env)
    assert str(info.value) == message


def test_invalid_file_value_names_the_file(tmp_path):
    write(tmp_path, {"port": "3001x"})
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    path = tmp_path.resolve() / "config.json"
    assert str(info.value) == f"port (from {path}) must be an integer from 1 to 65535; got '3001x'"


def test_boolean_in_the_file_must_be_a_json_boolean_or_word(tmp_path):
    write(tmp_path, {"printQRCodes": 3})
    with pytest.raises(ConfigError, match=r"printQRCodes \(from .*\) must be true or false; got 3"):
        config.load(tmp_path, env={})


def test_broken_json_says_where(tmp_path):
    (tmp_path / "config.json").write_text('{"port": 3001,\n "merchantId": }')
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    assert str(info.value).startswith(f"{tmp_path.resolve() / 'config.json'} is not valid JSON (line 2, column 16")
    assert str(info.value).endswith("fix it or run 'receco-agent init' again")


def test_unknown_setting_is_named(tmp_path):
    write(tmp_path, {"prot": 3001})
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    assert "has unknown setting(s) prot; known settings are merchantId, apiKey, rececoApiUrl" in str(info.value)


def test_missing_merchant_id_says_how_to_set_it(tmp_path):
    settings = config.load(tmp_path, env={})
    with pytest.raises(ConfigError) as info:
        settings.require_merchant_id()
    assert str(info.value) == (
        "merchantId is not set: run 'receco-agent init --merchant-id <id> --api-key <key>' or set RECECO_MERCHANT_ID"
    )


def test_write_creates_a_private_file_and_merges(tmp_path):
    home = tmp_path / "home"
    path = config.write(home, {"merchantId": "test-a", "apiKey": TEST_KEY, "port": 4100})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    config.write(home, {"rececoApiUrl": "https://r.example/api", "merchantId": None})
    data = json.loads(path.read_text())
    assert data["merchantId"] == "test-a"
    assert data["apiKey"] == TEST_KEY
    assert data["port"] == 4100
    assert data["rececoApiUrl"] == "https://r.example/api"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert list(home.iterdir()) == [path]


def test_write_refuses_invalid_values_and_leaves_the_file(tmp_path):
    path = config.write(tmp_path, {"merchantId": "test-a"})
    before = path.read_text()
    with pytest.raises(ConfigError) as info:
        config.write(tmp_path, {"port": 0})
    assert str(info.value) == "port must be an integer from 1 to 65535; got 0"
    assert path.read_text() == before


def test_web_url_defaults_to_the_api_urls_origin(tmp_path):
    write(tmp_path, {"rececoApiUrl": "https://receco.example:8443/api"})
    assert config.load(tmp_path, env={}).web_url == "https://receco.example:8443"
    assert config.load(tmp_path, env={"RECECO_WEB_URL": "https://web.example"}).web_url == "https://web.example"


def test_init_derives_the_web_url_unless_given(tmp_path):
    path = config.write(tmp_path / "a", {"merchantId": "test-a", "rececoApiUrl": "https://r.example/api"})
    assert json.loads(path.read_text())["rececoWebUrl"] == "https://r.example"
    path = config.write(
        tmp_path / "b", {"rececoApiUrl": "https://r.example/api", "rececoWebUrl": "https://receipts.example"}
    )
    assert json.loads(path.read_text())["rececoWebUrl"] == "https://receipts.example"


def test_a_key_of_the_right_form_with_a_wrong_checksum_is_refused():
    mistyped = TEST_KEY[:20] + ("A" if TEST_KEY[20] != "A" else "B") + TEST_KEY[21:]
    assert config.key_problem(TEST_KEY) is None
    assert config.key_problem(LIVE_KEY) is None
    assert config.key_problem(mistyped) == (
        "its checksum does not match: a character was mistyped or the key was cut short"
    )
    assert config.key_problem("postest_...") == (
        "its form is wrong: 58 characters, postest_ or poslive_ then 50 letters and digits"
    )


def test_the_readmes_placeholder_key_is_refused_at_init(tmp_path):
    with pytest.raises(ConfigError) as caught:
        config.write(tmp_path, {"merchantId": "test-shop", "apiKey": "postest_..."})
    assert str(caught.value) == (
        "apiKey must be a Receco API key as the dashboard showed it, copied whole (its form is wrong: 58 "
        "characters, postest_ or poslive_ then 50 letters and digits); got 'postest_...'"
    )
