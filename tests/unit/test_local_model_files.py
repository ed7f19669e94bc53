import hashlib

import pytest

from cli.model import ModelError, doctor, join_parts, verify
from config.settings import Settings


def _parts(tmp_path, chunks):
    paths = []
    for i, chunk in enumerate(chunks):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_parts_are_joined_in_order_and_kept_only_when_they_match(tmp_path):
    chunks = [b"GGUF", b"-middle-", b"end"]
    whole = b"".join(chunks)
    target = tmp_path / "models" / "m.gguf"
    sha = hashlib.sha256(whole).hexdigest()
    join_parts(_parts(tmp_path, chunks), target, size=len(whole), sha256=sha)
    assert target.read_bytes() == whole
    assert verify(target, size=len(whole), sha256=sha) is None


def test_a_wrong_hash_leaves_no_file(tmp_path):
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelError, match="sha256"):
        join_parts(_parts(tmp_path, [b"abc"]), target, size=3, sha256="0" * 64)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_a_wrong_size_leaves_no_file(tmp_path):
    target = tmp_path / "m.gguf"
    with pytest.raises(ModelError, match="expected 4"):
        join_parts(_parts(tmp_path, [b"abc"]), target, size=4, sha256="0" * 64)
    assert not target.exists()


def test_verify_reports_size_mismatch(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"x")
    assert "size 1 bytes" in verify(path, size=2, sha256="0" * 64)


def test_doctor_with_rules_needs_no_endpoint(tmp_path):
    report = doctor(Settings(REACH_DATA_DIR=tmp_path))
    assert report["ok"] and report["endpoint"].startswith("not needed")
    assert report["api_key"] == "not set"
