"""Signed receipts: a DSSE envelope around the in-toto statement, signed with HMAC-SHA256 and a key file.

The envelope is the one in-toto attestations travel in (`payloadType`, base64 `payload`, `signatures`);
the signature covers DSSE's pre-authentication encoding of the payload, so no byte of the statement can
change without it failing. HMAC needs only the standard library; whoever verifies needs the same key file
(CONTRIBUTING.md says why this and not a public-key scheme).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets

from rankgate.core.errors import InputError

PAYLOAD_TYPE = "application/vnd.in-toto+json"
MIN_KEY_BYTES = 16
MAX_KEY_BYTES = 4096


def read_key(path: str) -> bytes:
    """The key file's bytes (surrounding whitespace dropped): at least 16 bytes, refused when it is not a
    regular file or absurdly long."""
    import stat

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(path, "the signing key must be a regular file")
        if st.st_size > MAX_KEY_BYTES:
            raise InputError(path, f"not a signing key: over {MAX_KEY_BYTES} bytes")
        with open(path, "rb") as f:
            key = f.read(MAX_KEY_BYTES + 1).strip()
    except FileNotFoundError:
        raise InputError(path, "no such key file (make one with: rankgate receipt keygen FILE)") from None
    except OSError as e:
        raise InputError(path, f"cannot read the key file: {e.strerror or e}") from None
    if len(key) < MIN_KEY_BYTES:
        raise InputError(path, f"a signing key needs at least {MIN_KEY_BYTES} bytes, found {len(key)}")
    return key


def new_key() -> str:
    """A fresh key: 32 random bytes as hex."""
    return secrets.token_hex(32) + "\n"


def key_id(key: bytes) -> str:
    """A name for the key that does not give it away."""
    return "hmac-sha256:" + hashlib.sha256(b"rankgate key id\0" + key).hexdigest()[:16]


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def _sig(key: bytes, payload_type: str, payload: bytes) -> str:
    return base64.b64encode(hmac.new(key, pae(payload_type, payload), hashlib.sha256).digest()).decode("ascii")


def sign(statement: dict, key: bytes) -> dict:
    payload = json.dumps(statement, indent=2, ensure_ascii=False).encode("utf-8")
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(payload).decode("ascii"),
            "signatures": [{"keyid": key_id(key), "sig": _sig(key, PAYLOAD_TYPE, payload)}]}


def is_envelope(data) -> bool:
    return isinstance(data, dict) and "payloadType" in data and "payload" in data


def open_envelope(data: dict, where: str) -> tuple[dict, bytes, list]:
    """The statement inside an envelope, the payload's bytes and its signatures (not checked here)."""
    if data.get("payloadType") != PAYLOAD_TYPE:
        raise InputError(where, f"not a rankgate receipt: payloadType {str(data.get('payloadType'))[:60]!r}, "
                         f"expected {PAYLOAD_TYPE!r}")
    try:
        payload = base64.b64decode(data["payload"], validate=True)
        inner = json.loads(payload.decode("utf-8"))
    except (TypeError, ValueError):
        raise InputError(where, "not a rankgate receipt: the envelope's payload is not base64 JSON") from None
    except RecursionError:
        raise InputError(where, "not a rankgate receipt: the envelope's payload is JSON nested too deeply") from None
    sigs = data.get("signatures")
    if not isinstance(sigs, list):
        raise InputError(where, "not a rankgate receipt: the envelope has no signatures list")
    return inner, payload, sigs


def check_signature(payload: bytes, sigs: list, key: bytes) -> str | None:
    """None when one signature is this key's over these bytes, else what is wrong."""
    mine = [s for s in sigs if isinstance(s, dict) and s.get("keyid") == key_id(key)]
    if not mine:
        return "no signature by this key (the receipt was signed with another key, or its key id was changed)"
    want = _sig(key, PAYLOAD_TYPE, payload)
    if any(hmac.compare_digest(str(s.get("sig")), want) for s in mine):
        return None
    return "the signature does not match the receipt (its contents or its signature were changed)"
