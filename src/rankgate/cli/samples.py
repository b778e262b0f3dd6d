"""`rankgate samples list | copy DIR`: the bundled sample benchmarks, wherever rankgate was installed from."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from rankgate.cli.base import EXIT_OK, say, shell, usage
from rankgate.core.errors import InputError


def samples_root() -> Path:
    """The samples shipped with the package (a link to sample_benchmarks/ in a checkout)."""
    from importlib.resources import files

    return Path(str(files("rankgate") / "samples"))


def sample_names() -> list[str]:
    root = samples_root()
    return sorted(p.name for p in root.iterdir() if (p / "benchmark.toml").is_file()) if root.is_dir() else []


def register(sub) -> None:
    s = sub.add_parser("samples", help="the bundled sample benchmarks: list them, copy them to a folder")
    cmds = s.add_subparsers(dest="samples_command", metavar="COMMAND")
    ls = cmds.add_parser("list", help="name each sample and what it shows")
    ls.set_defaults(func=cmd_list)
    cp = cmds.add_parser("copy", help="copy the samples (or one) into a new folder DIR")
    cp.add_argument("dir", metavar="DIR", help="the folder to create (it must not exist yet)")
    cp.add_argument("--only", metavar="NAME", help="copy one sample: " + ", ".join(sample_names()))
    cp.set_defaults(func=cmd_copy)
    s.set_defaults(func=lambda args: usage(s))


def _summary(folder: Path) -> str:
    readme = folder / "README.md"
    if not readme.is_file():
        return ""
    para = []
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            para.append(line.strip())
        elif para:
            break
    text = " ".join(para)
    cut = text.find(". ")
    text = text[:cut + 1] if cut >= 0 else text
    return text if len(text) <= 100 else text[:99] + "…"


def cmd_list(args) -> int:
    root = samples_root()
    for name in sample_names():
        say(f"{name:<16} {_summary(root / name)}")
    return EXIT_OK


def cmd_copy(args) -> int:
    names = sample_names()
    if not names:
        raise InputError(str(samples_root()), "this installation carries no samples (reinstall rankgate)")
    if args.only and args.only not in names:
        raise InputError("--only", f"no sample named {args.only!r} (expected one of {', '.join(names)})")
    if not args.dir.strip():
        raise InputError("samples copy", "DIR is empty: name a new folder (nothing was copied)")
    target = Path(args.dir)
    if target.exists() or target.is_symlink():
        raise InputError(args.dir, "exists already: name a new folder (nothing was copied)")
    if not target.parent.is_dir() and str(target.parent) not in ("", "."):
        raise InputError(args.dir, "cannot copy the samples: the folder above it does not exist")
    chosen = [args.only] if args.only else names
    tmp = None
    try:
        # a fresh folder of our own beside the target (never one that was there: that may be the user's)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent))
        umask = os.umask(0o022)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)  # as mkdir would have made it (mkdtemp's is private)
        for name in chosen:
            shutil.copytree(samples_root() / name, tmp / name, copy_function=shutil.copyfile,  # the umask's mode,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # not the installed files
        for d in tmp.rglob("*"):  # copytree gives folders the installed ones' mode (0555 in a read-only install)
            if d.is_dir() and not d.is_symlink():
                d.chmod(0o777 & ~umask)
        tmp.rename(target)  # all or nothing
    except OSError as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(args.dir, f"cannot copy the samples: {e.strerror or e}") from None
    say(f"copied {len(chosen)} sample{'s' if len(chosen) != 1 else ''} to {target}: {', '.join(chosen)}")
    if "ops-handbook" in chosen:
        say(f"try: rankgate review {shell(target / 'ops-handbook')}")
    return EXIT_OK
