"""The huge-page heap policy's environment and its checks of the machine
(`dynyan.pipeline.hugepages`); the re-executed replay is tested in
test_pipeline.py."""

from __future__ import annotations

import platform
import sys

import pytest

from dynyan.pipeline import hugepages


def test_environment_sets_both_variables_and_keeps_other_tunables():
    env = hugepages.environment(
        {"HOME": "/h", "GLIBC_TUNABLES": "glibc.malloc.arena_max=2"}
    )
    assert env["HOME"] == "/h" and env["PYTHONMALLOC"] == "malloc"
    assert env["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    assert hugepages.active(env)
    again = hugepages.environment(
        {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2"}
    )
    assert again["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"PYTHONMALLOC": "malloc"},
        {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"},
        {"PYTHONMALLOC": "pymalloc", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"},
        {"PYTHONMALLOC": "malloc", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=10"},
    ],
)
def test_a_process_without_both_settings_is_not_under_the_policy(env):
    assert not hugepages.active(env)


def test_unsupported_says_why(monkeypatch, tmp_path):
    setting = tmp_path / "enabled"
    monkeypatch.setattr(hugepages, "THP_SETTING", setting)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", "2.36"))
    assert "unreadable" in hugepages.unsupported()
    setting.write_text("always madvise [never]\n")
    assert "are off" in hugepages.unsupported()
    setting.write_text("always [madvise] never\n")
    assert hugepages.unsupported() is None
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", "2.31"))
    assert "2.35 or later" in hugepages.unsupported()
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", ""))
    assert "cannot tell" in hugepages.unsupported()
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    assert "glibc's malloc" in hugepages.unsupported()
    monkeypatch.setattr(sys, "platform", "darwin")
    assert "Linux feature" in hugepages.unsupported()


def test_a_replay_that_cannot_restart_says_so_and_goes_on(monkeypatch, capsys):
    from dynyan.cli import pipeline

    def fail():
        raise PermissionError("denied")

    monkeypatch.setattr(hugepages, "active", lambda: False)
    monkeypatch.setattr(hugepages, "unsupported", lambda: None)
    monkeypatch.setattr(hugepages, "reexec", fail)
    pipeline._on_huge_pages()
    assert "--huge-pages ignored: cannot restart" in capsys.readouterr().err
