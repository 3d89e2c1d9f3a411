"""Secrets never enter the log: a credential in a write is refused (or masked), nothing written.

Each shape is built from parts so that this file itself holds no whole credential. "Nothing
written" is checked on the log (its last position) and on the bytes of every file the ledger
keeps (log, read models, WAL, backup): the secret's text is in none of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.app import credentials
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings, load_settings

B64 = "wJalrXUtnFEMIK7MDENGbPxRfiCYzq3x9T2mLs8V"  # 40 characters of a key's alphabet
ALNUM = "Zq8x3Kp0Lm7Nv2Rt5Wy9Bc4Df6Gh1Jk"  # 31 mixed-case letters and digits

# (expected kind, text around it, the secret itself): the secret is where ``{}`` stands.
SHAPES: list[tuple[str, str, str]] = [
    ("aws-access-key", "the deploy user's key is {} for staging", "AKIA" + "IOSFODNN7Q3XAMPLE"[:16]),
    ("aws-access-key", "temporary credentials {}", "ASIA" + "Y34FZKBOKMUTVV7A"),
    ("aws-secret-key", "aws_secret_access_key = {}", B64),
    ("aws-secret-key", 'AWS secret key: "{}"', B64[::-1]),
    (
        "private-key",
        "server key:\n{}\nend",
        "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEow" + ALNUM + "\n-----END RSA PRIVATE KEY-----",
    ),
    (
        "private-key",
        "{}",
        "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE" + ALNUM + "\n-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "private-key",
        "ec: {}",
        "-----BEGIN EC " + "PRIVATE KEY-----\nMHcCAQEEI" + ALNUM + "\n-----END EC PRIVATE KEY-----",
    ),
    (
        "private-key",
        "{}",
        "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\nlQOYBF" + ALNUM + "\n-----END PGP PRIVATE KEY BLOCK-----",
    ),
    (
        "private-key",
        "pasted {}",
        "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADAN" + ALNUM,
    ),  # cut short: to the line's end
    ("github-token", "CI uses {}", "ghp" + "_" + (ALNUM + "abcde")[:36]),
    ("github-token", "oauth {}", "gho" + "_" + (ALNUM + "fghij")[:36]),
    ("github-token", "fine-grained {}", "github" + "_pat_" + "11ABCDEFG0" + "abcdefghij12" + "_" + (ALNUM * 2)[:59]),
    ("gitlab-token", "gitlab {}", "glpat" + "-" + "xZ8kP2mQ7rT4vB9nL3sD"),
    ("slack-token", "bot token {}", "xoxb" + "-123456789012-1234567890123-" + "abcdefghijklmnopqrstuvwx"),
    ("slack-webhook", "alerts go to {}", "https://hooks.slack.com/services/" + "T0ABCDEFG/B0ABCDEFG/" + ALNUM[:24]),
    ("stripe-key", "billing {}", "sk" + "_live_" + ALNUM[:24]),
    ("stripe-key", "restricted {}", "rk" + "_live_" + ALNUM[:24]),
    ("stripe-key", "test mode {}", "sk" + "_test_" + ALNUM[:26]),
    ("openai-key", "OPENAI_API_KEY is {}", "sk" + "-proj-" + ALNUM + "_" + ALNUM[:20]),
    ("openai-key", "legacy {}", "sk" + "-" + ALNUM[:20] + "T3Blbk" + "FJ" + ALNUM[-20:]),
    ("anthropic-key", "claude {}", "sk" + "-ant-api03-" + ALNUM + ALNUM[:10]),
    ("api-key", "deepseek {}", "sk" + "-" + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"),
    (
        "jwt",
        "Authorization: Bearer {}",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
        + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    # a connection string: the password is the secret, the user and the host stay readable
    ("connection-password", "DATABASE_URL=postgres://app:{}@db.internal:5432/main", "hunter2" + "-Prod!"),
    ("connection-password", "mysql://root:{}@10.0.0.5/shop", "Sup3r" + "$ecret"),
    ("connection-password", "atlas mongodb+srv://svc:{}@cluster0.x1y2z.mongodb.net/db", "m0ng0" + "Pa55"),
    ("connection-password", "cache redis://:{}@cache:6379/0", "r3dis" + "Pa55w0rd"),
    ("connection-password", "mirror https://deploy:{}@git.example.com/repo.git", "tok3n" + "-Value9"),
    ("password", "the staging database password is {}", "hunter2" + "-Prod"),
    ("password", "Password: '{}'", "correct horse"[:7] + "9!"),
    ("password", "api_key={}", "q7Zx" + "9Lm2Pw4"),
    ("password", "密码是{}", "hunter" + "2024"),
    ("password", "数据库口令：{}", "Ab" + "c12345"),
    ("password", "the lab wifi passphrase is {}", "new" + "pass"),  # one word that ends the sentence
    ("password", "printer passwd: {}. Do not share it.", "letme" + "in"),
    # a quoted value to its closing quote, spaces and all (it was masked to its first space)
    ("password", "the wiki admin password is '{}'", "correct horse " + "battery staple"),
    ("password", 'wifi 密码是 "{}"', "kai men " + "ba 2024"),
    ("password", "The admin password is: {}", "open sesame " + "42"),  # after a colon: the clause
    # a variable named for a credential, set in a shell or an .env file
    ("password", "export PGPASSWORD={}", "Tr0ub4" + "dor3x"),
    ("password", "DB_PASSWORD={}", "hunter" + "x"),
    ("password", "export GITHUB_TOKEN={}", "abc123" + "def456ghi789"),
    # given on a command line: a long flag, or the password flag of a command people paste
    ("password", "deploy with mytool --password {} --user bob", "hunter2" + "xyz"),
    ("password", "mytool --api-key '{}'", "two words" + " 42"),
    ("password", "mysql -u root -p{} shop", "S3cret" + "Pass!"),  # attached: the "!" is the password's
    ("password", 'mysqldump -uroot -p"{}" shop', "S3cret " + "Pass"),
    ("password", "docker login -u bob -p {} registry.example.com", "Sup3r" + "S3cret"),
    ("password", "sshpass -p {} ssh deploy@host", "Hunt3r" + "2"),
    ("password", "redis-cli -h cache -a {} ping", "r3dis" + "Pa55"),
    ("password", "ldapsearch -x -D cn=admin -w {} -b dc=example", "adm1n" + "Pw"),
    ("password", "sqlcmd -S db -U sa -P {}", "Passw0" + "rd!"),
    ("password", "mongosh --host db -u root -p {}", "r00t" + "pw"),
    ("password", "curl -u admin:{} https://api.example.com", "Sup3r" + "S3cret"),
    ("password", "http -a bob:{} example.org", "pa55" + "word"),
    ("password", "用 curl -u alice:{}，然后调用接口查询订单状态", "S3cret" + "Pw"),  # to the comma, not past it
    ("password", "curl https://api.example.com/v1/orders \\\n  -u alice:{}", "S3cret" + "Pw"),  # a line going on
    ("password", "MySQL -u root -p{}", "S3cret" + "Pass"),
    ("password", "mytool --apiKey {}", "abc123" + "def456"),
    ("password", "mytool --api_key {}", "abc123" + "def456"),
    ("authorization", "headers: 'Authorization': 'Bearer {}'", "9f8e7d6c" + "5b4a3921"),
    ("authorization", 'curl -H "Authorization: Bearer {}" https://api', "abcdefghij" + "1234567"),
    ("authorization", "Authorization: Basic {}", "YWRtaW46" + "c2VjcmV0"),
    ("sendgrid-key", "mail {}", "SG" + "." + (ALNUM * 2)[:22] + "." + (ALNUM * 2)[:43]),
    ("twilio-key", "sms {}", "SK" + "0123456789abcdef0123456789abcdef"),
    ("npm-token", "registry {}", "npm" + "_" + (ALNUM + "abcdef")[:36]),
    ("pypi-token", "upload with {}", "pypi" + "-AgEIcHlwaS5vcmc" + (ALNUM * 3)[:72]),
    ("huggingface-token", "hub {}", "hf" + "_" + (ALNUM + "abcdef")[:34]),
    ("google-api-key", "maps {}", "AIza" + "SyA" + (ALNUM + "abcdefgh")[:32]),
    ("telegram-token", "bot {}", "123456789" + ":" + "AAH" + (ALNUM + "abcd")[:32]),
    ("azure-storage-key", "{}", "AccountKey=" + (ALNUM * 3)[:86] + "=="),
    ("mailchimp-key", "newsletter {}", "0123456789abcdef0123456789abcdef" + "-us12"),
    ("square-secret", "square {}", "sq0csp" + "-" + (ALNUM * 2)[:43]),
    ("discord-token", "discord {}", "M" + (ALNUM * 2)[:23] + "." + "G1a2b3" + "." + (ALNUM * 2)[:27]),
]

# What a memory holds every day and must pass: ports, hashes, UUIDs, URLs without credentials.
PROSE = [
    "The staging API listens on port 8080 (was 8081 until March).",
    "Fixed in commit 3f9c2e1a7b4d5e6f8091a2b3c4d5e6f708192a3b: the retry loop ran twice.",
    "Request id 123e4567-e89b-12d3-a456-426614174000 failed with 503.",
    "Docs are at https://docs.example.com/guide?page=2#install and http://localhost:3000/@admin.",
    "ssh git@github.com:acme/ledger.git, then postgres://localhost:5432/app (no password).",
    "The password is required for the admin page; reset it through the portal.",
    "Her password was in 1Password; the token is expired and the secret key is in the vault.",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the empty file.",
    "DATABASE_URL=postgres://app:${PGPASSWORD}@db:5432/main",
    "Templates name the password: postgres://user:PASSWORD@host, postgresql://agent:secret@db/ledger.",
    "密码是一个好问题，明天讨论。",
    "Release v2.14.0 ships on 2024-05-03; build 20240503.1 passed.",
    "Use sk-learn? No: scikit-learn is imported as sklearn.",
    "The password is expired, and the new password is required. Her password is protected.",
    "Your password is wrong! The password is stored in the vault; my password is secret.",
    "Password: required. TOKEN: none.",
    "The password: must be 12 chars. Password: see the vault.",
    'The password is "at least 12 characters"; the old one is "changed every 90 days".',
    "The wifi password is: on the fridge. DB_PASSWORD=<your password here>",
    'Set max_tokens=100000 and pass on_secret: "mask" to keep the text.',
    "PGPASSWORD=$PGPASS is read from the environment; DB_PASSWORD_FILE=/run/secrets/db holds it.",
    # flags that take no password, or take one from elsewhere: a prompt, a variable, stdin, a file
    "mkdir -p build && ssh -p 2222 host; mysql -u root -p shop asks for it; use --password when asked.",
    'mysql -uroot -p$MYSQL_PWD; curl -H "Authorization: Bearer $TOKEN" -u "$USER:$PASS" https://x',
    "docker login -u bob --password-stdin; mytool --token-file ~/.token --password <password>",
    "The API takes Authorization: Bearer authentication; curl -u bob: https://x prompts for it.",
    # a flag's value that is a file, a spec, a name, a port mapping, a Windows variable or a word
    "ansible-playbook site.yml --private-key keys/deploy.pem -i hosts; ssh --private-key id_rsa.pem",
    "docker build --secret id=npmrc,src=$HOME/.npmrc -t app .; gcloud secrets versions access 1 --secret db-password",
    "Docs at https://docs.docker.com: run docker run -u 1000:1000 -v data:/data app; docker exec -u www-data:www-data",
    "Tunnel to mysql: ssh -p2222 -L 3306:db:3306 bastion. mysql container: docker run -d -p3306:3306 mysql",
    "On Windows CI: sqlcmd -S srv -U sa -P %SA_PASSWORD%; mysql -p%MYSQL_PWD%",
    "docker login docs: use -p only in CI, prefer --password-stdin; docker login -p flag leaks it",
]


def _files(tmp: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp.rglob("*")) if p.is_file())


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", agent_id="pytest"))
    app.remember("An ordinary first fact keeps the log non-empty")
    yield app
    app.close()


def test_the_table_is_thirty_shapes_or_more() -> None:
    assert len(SHAPES) >= 30
    assert len({kind for kind, _, _ in SHAPES}) >= 20


@pytest.mark.parametrize(("kind", "around", "secret"), SHAPES, ids=[f"{i}-{s[0]}" for i, s in enumerate(SHAPES)])
def test_each_shape_is_found_with_its_kind_and_span(kind: str, around: str, secret: str) -> None:
    text = around.format(secret)
    found = credentials.find(text)
    start = around.index("{}")
    assert found == [(kind, start, start + len(secret))], found


def test_a_masked_text_holds_no_credential_when_written_again() -> None:
    """What a mask stored can be written again as it is (a copy of a masked memory, a masked
    write that replay decides again): "password is [secret:password]" was a password."""
    for _kind, around, secret in SHAPES:
        once = credentials.masked({"content": around.format(secret), "metadata": {"password": secret}})
        assert credentials.scan(once) == [], once
        assert credentials.masked(once) == once


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_passes(text: str) -> None:
    assert credentials.find(text) == []


def test_every_shape_is_refused_and_nothing_is_written(ledger: LedgerApp, tmp_path: Path) -> None:
    ledger.close()  # the files as the log left them (a checkpointed WAL)
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", agent_id="pytest"))
    try:
        head = app.status()["events"]
        for kind, around, secret in SHAPES:
            text = around.format(secret)
            with pytest.raises(InvalidInput) as refused:
                app.remember(text, subject="credentials")
            error = refused.value.to_dict()
            start = around.index("{}")
            assert error["code"] == "invalid_input" and error["field"] == "content"
            assert (error["kind"], error["start"], error["end"]) == (kind, start, start + len(secret))
            assert secret not in json.dumps(error, ensure_ascii=False)  # the error never repeats it
            assert app.status()["events"] == head
    finally:
        app.close()
    stored = _files(tmp_path)
    for _, _, secret in SHAPES:
        assert secret.encode() not in stored


def test_governing_words_hold_no_credential_and_the_refusal_writes_nothing(tmp_path: Path) -> None:
    """A retirement's or supersession's reason, a judgment's rationale, a notice's review and an
    erasure's reason stay in the log for good (they are not erased with the memory): a credential
    in them is refused before anything is written, through the facade and at the CLI."""
    from fact_ledger.ledger.log.events import AUTH_USER
    from tests.conftest import ledger_cli

    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="test", agent_id="pytest"))
    key, token = "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    try:
        a = app.remember("The staging API listens on port 8080", subject="staging api")["memory_id"]
        b = app.remember("The staging API listens on port 9090", subject="staging api")["memory_id"]
        conflict = app.remember("The staging API listens on port 7070", subject="staging api")["conflicts"][0]
        head = app.status()["events"]
        calls = {
            "retire": lambda: app.retire(a, reason=f"rotated {key}", authorization=AUTH_USER),
            "supersede": lambda: app.supersede(a, b, reason=f"postgres://app:S3cret!pw@db:5432/main {key}"),
            "judge": lambda: app.judge(conflict["conflict_id"], b, rationale=f"token {token}"),
            "erase": lambda: app.erase(a, reason=f"it held {key}", authorization=AUTH_USER),
        }
        for name, call in calls.items():
            with pytest.raises(InvalidInput) as refused:
                call()
            error = refused.value.to_dict()
            assert error["field"] == ("rationale" if name == "judge" else "reason"), name
            assert "stays in the log for good" in error["message"] and key not in error["message"]
            assert app.status()["events"] == head, name
        assert app.retire(a, reason="rotated the key", authorization=AUTH_USER)["ok"]  # plain words pass
    finally:
        app.close()
    cli = ledger_cli("retire", str(b), "--reason", f"key {key}", "--db", str(db))
    assert cli.returncode == 1 and "looks like a credential (aws-access-key" in cli.stderr, cli.stderr
    assert key.encode() not in _files(tmp_path) and token.encode() not in _files(tmp_path)


def test_every_shape_is_masked_with_the_flag(ledger: LedgerApp, tmp_path: Path) -> None:
    for kind, around, secret in SHAPES:
        result = ledger.remember(around.format(secret), on_secret="mask")
        start = around.index("{}")
        assert result["secrets_masked"] == [
            {"field": "content", "kind": kind, "start": start, "end": start + len(secret)}
        ]
        assert ledger.read(result["memory_id"])["memory"]["content"] == around.format(f"[secret:{kind}]")
    ledger.close()
    stored = _files(tmp_path)
    for kind, _, secret in SHAPES:
        assert secret.encode() not in stored
        assert f"[secret:{kind}]".encode() in stored


def test_subject_tags_metadata_source_ref_and_claims_are_scanned(ledger: LedgerApp) -> None:
    key = "AKIA" + "Q3EGRFXL7PBN2MZD"
    cases = [
        ({"subject": f"key {key}"}, "subject", 4),
        ({"tags": ["ok", key]}, "tags.1", 0),
        ({"metadata": {"env": {"aws": f"id={key}"}}}, "metadata.env.aws", 3),
        ({"metadata": {"db": {"password": "plain" + "words"}}}, "metadata.db.password", 0),  # named by its key
        ({"source_ref": "https://bot:" + "s3cr3t-x" + "@ci.example.com/job/1"}, "source_ref", 12),
        ({"claims": [{"subject": "ci", "attribute": "key", "value": key}]}, "claims.0.value", 0),
    ]
    head = ledger.status()["events"]
    for fields, field, start in cases:
        with pytest.raises(InvalidInput) as refused:
            ledger.remember("a fact about credentials", **fields)
        assert (refused.value.field, refused.value.details["start"]) == (field, start)
    assert ledger.status()["events"] == head
    masked = ledger.remember(
        "a fact about credentials",
        subject=f"key {key}",
        tags=[key],
        metadata={"db": {"password": "plain" + "words", "port": 5432}},
        on_secret="mask",
    )
    row = ledger.read(masked["memory_id"])["memory"]
    assert row["subject"] == "key [secret:aws-access-key]" and row["tags"] == ["[secret:aws-access-key]"]
    assert row["metadata"] == {"db": {"password": "[secret:password]", "port": 5432}}


def test_a_metadata_key_that_ends_in_a_credential_s_name_is_one(ledger: LedgerApp) -> None:
    """Only a key that was exactly "password" (or "token", …) counted: "db_password",
    "GITHUB_TOKEN", a number and a list under "password" were stored in clear."""
    head = ledger.status()["events"]
    for metadata, field in (
        ({"db_password": "hunter" + "2"}, "metadata.db_password"),
        ({"DB_PASSWORD": "hunter" + "2"}, "metadata.DB_PASSWORD"),
        ({"ci": {"github_token": "abc123" + "xyz"}}, "metadata.ci.github_token"),
        ({"password": 12345678}, "metadata.password"),
        ({"secret": ["hunter" + "2"]}, "metadata.secret.0"),
    ):
        with pytest.raises(InvalidInput) as refused:
            ledger.remember("a fact about a database", metadata=metadata)
        assert refused.value.field == field
    assert ledger.status()["events"] == head
    kept = {
        "max_tokens": 4096,
        "token_count": 12345678,
        "password_policy": "rotate",
        "next_page_token": "CAESBggBEAEYAQ",
    }
    kept["client_secret"] = "(see vault)"
    assert ledger.read(ledger.remember("model settings", metadata=kept)["memory_id"])["memory"]["metadata"] == kept
    masked = ledger.remember("a fact about a database", metadata={"password": 12345678}, on_secret="mask")
    assert ledger.read(masked["memory_id"])["memory"]["metadata"] == {"password": "[secret:password]"}


def test_a_claim_whose_attribute_names_a_credential_holds_one(ledger: LedgerApp) -> None:
    """A password given as a structured claim ({"attribute": "password", "value": "…"}) was stored
    and shown to every agent in the claim set's values and the health report."""
    head = ledger.status()["events"]
    for attribute in ("password", "db password", "API_KEY", "数据库密码"):
        claim = {"subject": "prod db", "attribute": attribute, "value": "Tr0ub4" + "dor&3"}
        with pytest.raises(InvalidInput) as refused:
            ledger.remember("rotated the db credential", claims=[claim])
        assert refused.value.field == "claims.0.value"
    assert ledger.status()["events"] == head
    claim = {"subject": "prod db", "attribute": "password", "value": "correct" + "horse99"}
    masked = ledger.remember("rotated the db credential", claims=[claim], on_secret="mask")
    assert masked["secrets_masked"][0]["field"] == "claims.0.value"
    held = {"subject": "prod db", "attribute": "password policy", "value": "rotate every 90 days"}
    assert ledger.remember("the db password policy", claims=[held])["status"] == "active"
    said = {"subject": "admin console", "attribute": "password", "value": "required"}  # said of it, as in text
    assert ledger.remember("The admin console password is required", claims=[said])["status"] == "active"
    for attribute in ("secret access key", "password (prod)"):
        aws = {"subject": "prod", "attribute": attribute, "value": "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"}
        with pytest.raises(InvalidInput):
            ledger.remember("the prod credential rotated", claims=[aws])


def test_update_is_refused_or_masked_the_same_way(ledger: LedgerApp, tmp_path: Path) -> None:
    token = "ghp" + "_" + (ALNUM + "klmno")[:36]
    memory = ledger.remember("CI reads its token from the vault")["memory_id"]
    head = ledger.status()["events"]
    with pytest.raises(InvalidInput) as refused:
        ledger.update(memory, content=f"CI token {token}")
    assert refused.value.details["kind"] == "github-token"
    with pytest.raises(InvalidInput):
        ledger.update(memory, metadata={"token": token})
    assert ledger.status()["events"] == head
    result = ledger.update(memory, content=f"CI token {token}", on_secret="mask")
    assert result["version"] == 2 and result["secrets_masked"][0]["kind"] == "github-token"
    assert ledger.read(memory)["memory"]["content"] == "CI token [secret:github-token]"
    ledger.close()
    assert token.encode() not in _files(tmp_path)


def test_a_workspace_can_be_allowed_to_keep_secrets(tmp_path: Path) -> None:
    key = "AKIA" + "Z7Y6X5W4V3U2T1S0"
    settings = Settings(db=str(tmp_path / "ledger.db"), client="test", secrets_allowed_workspaces=("vault",))
    app = LedgerApp(settings)
    try:
        kept = app.remember(f"break-glass key {key}", workspace="vault")
        assert "secrets_masked" not in kept
        assert app.read(kept["memory_id"])["memory"]["content"] == f"break-glass key {key}"
        with pytest.raises(InvalidInput):
            app.remember(f"break-glass key {key}", workspace="shared")
    finally:
        app.close()


def test_the_allowed_workspaces_come_from_config_and_environment(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('secrets_allowed_workspaces = ["vault", "ops"]\n')
    from_file = load_settings({"config": str(config)}, env={})
    assert from_file.secrets_allowed_workspaces == ("vault", "ops")
    assert from_file.secrets_allowed("ops") and not from_file.secrets_allowed("")
    from_env = load_settings(env={"LEDGER_SECRETS_ALLOWED_WORKSPACES": "vault, *"})
    assert from_env.secrets_allowed("anything")
    assert not load_settings(env={}).secrets_allowed("")
    config.write_text("secrets_allowed_workspaces = 3\n")
    with pytest.raises(InvalidInput, match="list of workspace names"):
        load_settings({"config": str(config)}, env={})


def test_on_secret_takes_only_its_two_values() -> None:
    from fact_ledger.server.schemas.memory import RememberData, UpdateData

    assert RememberData.parse({"content": "x"}).on_secret == "refuse"
    assert UpdateData.parse({"memory_id": 1, "on_secret": "mask"}).on_secret == "mask"
    with pytest.raises(InvalidInput) as refused:
        RememberData.parse({"content": "x", "on_secret": "allow"})
    assert refused.value.field == "on_secret"


def test_ordinary_text_never_imports_the_detector_library() -> None:
    """detect-secrets (and the requests it imports) costs ~0.2 s to import: a short note, even
    one with "laws" or "password is required" in it, is scanned without it; a token shape loads it."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from fact_ledger.server.app import credentials as c\n"
        "assert c.find('the new laws: port 8080, the password is required, 密码是一个问题') == []\n"
        "print('detect_secrets' in sys.modules)\n"
        "assert c.find('key ' + 'AKIA' + 'Q3EGRFXL7PBN2MZD') != []\n"
        "print('detect_secrets' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.split() == ["False", "True"]
