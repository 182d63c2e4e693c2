"""One redaction policy at every boundary: keys planted under several variable names, an endpoint that echoes
the key, a 401 body that quotes it, a notebook run through the runner with HTML; no file written and no line
printed may contain a key."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import nbformat
import pytest

from tomlib.__main__ import main
from tomlib.redact import REDACTED
from tomlib.report import build_report
from tomlib.runner import Profile, run_notebooks, summarize
from tomlib.testing import FakeOpenAIServer, Reply

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

NOTEBOOK_BODY = """
import os
from tomlib.llm import ChatModel
from tomlib.trace import RunLog

log = RunLog("secrets", results=results_dir or None)
echo = ChatModel.from_name("echo-model", mode=llm_mode)
log.observe(echo)
reply = echo.complete_sync([{"role": "user", "content": "what key did I send?"}], sample_key="secrets")
print("the endpoint said:", reply.content)
print("a careless print:", os.environ["MY_SERVICE_TOKEN"])
rejecting = ChatModel.from_name("reject-model", mode=llm_mode)
log.observe(rejecting)
rejecting.complete_sync([{"role": "user", "content": "hello"}], sample_key="secrets")
"""


def _bearer(request: dict) -> str:  # type: ignore[type-arg]
    return request["_headers"]["authorization"].removeprefix("Bearer ")


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    planted = {
        # a name no pattern would guess: only models.yaml says it holds a key
        "ACME_ACCESS_CODE": "acme-" + secrets.token_hex(12),
        "OTHER_VENDOR_TOKEN": "tok-" + secrets.token_hex(12),
        "MY_SERVICE_TOKEN": "svc-" + secrets.token_hex(12),
        "OPENAI_API_KEY": "sk-" + secrets.token_hex(20),
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    return planted


@pytest.mark.series
def test_no_key_reaches_any_file_or_output(
    keys: dict[str, str], isolated: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    echo = FakeOpenAIServer(responder=lambda r: f"you sent {_bearer(r)} (as api_key={_bearer(r)})")
    reject = FakeOpenAIServer(
        responder=lambda r: Reply(
            status=401,
            body=json.dumps(
                {"error": {"message": f"Incorrect API key provided: {_bearer(r)}.", "type": "invalid_request_error"}}
            ).encode(),
        )
    )
    with echo, reject:
        configs = isolated / "configs"
        configs.mkdir()
        (configs / "models.yaml").write_text(
            "models:\n"
            f"  echo-model: {{kind: openai, base_url: '{echo.base_url}', api_key_env: ACME_ACCESS_CODE,"
            " max_retries: 0}\n"
            f"  reject-model: {{kind: openai, base_url: '{reject.base_url}', api_key_env: OTHER_VENDOR_TOKEN,"
            " max_retries: 0}\n"
        )
        monkeypatch.setenv("TOMLIB_CONFIGS", str(configs))
        nbs = isolated / "nbs"
        nbs.mkdir()
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell("results_dir = ''\nllm_mode = 'auto'", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell(NOTEBOOK_BODY),
        ]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, nbs / "01_secrets.ipynb")

        out = run_notebooks(Profile(name="t"), directory=nbs, progress=False, html=True)
        print(summarize(out))
        build_report()
        transcript = isolated / "transcripts" / "secrets.jsonl.gz"
        assert main(["cache", "export", "--experiment", "secrets", "--out", str(transcript)]) == 0
        assert main(["cache", "stats"]) == 0

    # the run really met both: an echo, then a 401 quoting the key
    assert echo.n_requests == 1 and reject.n_requests == 1
    assert out[0].status == "failed" and "was rejected" in out[0].error and "HTTP 401" in out[0].error
    executed = (isolated / "results" / "notebooks" / "01_secrets.ipynb").read_text()
    assert f"you sent {REDACTED}" in executed and f"a careless print: {REDACTED}" in executed

    printed = capfd.readouterr()
    written = [p for p in isolated.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in written) and any(
        p.name == "stamp.json" or "stamp" in p.name for p in written
    )
    for name, value in keys.items():
        for form in {value, json.dumps(value)[1:-1]}:
            assert form not in printed.out and form not in printed.err, f"{name} printed"
            for path in written:
                data = path.read_bytes()
                if path.suffix == ".gz":
                    import gzip

                    data = gzip.decompress(data)
                assert form.encode() not in data, f"{name} leaked into {path.relative_to(isolated)}"


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: BEARER abcdefghijklmnopqrstuv",
        'config {"Api_Key": "abcdefghijklmnop1234"}',
        "token " + "sk-" + secrets.token_hex(12) + " in the reply",  # key-shaped, drawn here so no file holds one
        "the planted value plantedLineSecret-99 here",
    ],
    ids=["bearer", "api-key", "sk-key", "env-value"],  # fixed ids: parallel workers must collect the same names
)
def test_the_run_log_fast_path_still_redacts(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tomlib.redact import _PATTERNS, Redactor

    monkeypatch.setenv("LINE_TEST_TOKEN", "plantedLineSecret-99")
    r = Redactor()
    line = json.dumps({"payload": {"text": text, "ünïcode": "✓"}}, ensure_ascii=False).encode()
    out = r.line(line)
    assert REDACTED.encode() in out and out.decode() == r.text(line.decode())
    clean = json.dumps({"state": "#.1..a#", "note": "rapid capital"}).encode()  # 'api' inside words: slow path
    assert r.line(clean) == clean and r.line(b'{"x": 1}') == b'{"x": 1}'
    # line() checks these literals by hand; a new pattern needs its literal there too
    assert [lit for lit, _ in _PATTERNS] == ["sk-", "bearer", "api"]
