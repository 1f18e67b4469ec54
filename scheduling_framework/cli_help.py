"""``--help`` examples for every command, the bash completion script the ``completion`` command prints, and the
flags several commands share (``add_release_flags``), so that command modules need not import ``cli``.

Kept apart from cli.py so that commands added by other modules get their examples here in one place; the
completion script is generated from the parser itself, so it always knows every command and flag.
"""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, str] = {
    "": """examples:
  scheduling-framework demo
  scheduling-framework schedule --cluster examples/cluster.yaml --seed 1
  scheduling-framework capacity --cluster examples/cluster.yaml --pod web.yaml
  scheduling-framework config view --output config > effective.yaml
  scheduling-framework completion bash > ~/.local/share/bash-completion/completions/scheduling-framework""",
    "schedule": """examples:
  scheduling-framework schedule --cluster examples/cluster.yaml --seed 1
  scheduling-framework schedule --cluster dump.yaml --explain --pod 'shop/web-*' --explain-nodes 3
  scheduling-framework schedule --cluster dump.yaml --output json > run.json
  scheduling-framework schedule --cluster day1.yaml --output yaml > day2.yaml      # the resulting cluster
  scheduling-framework schedule --cluster manifests.yaml --fail-on-unschedulable   # CI gate: exit 3
  scheduling-framework schedule --cluster dump.yaml --report run.html              # a page to open offline
  scheduling-framework schedule --cluster dump.yaml --why --node-template nodes.yaml  # what would make it fit
  kubectl get nodes,pods -A -o yaml | scheduling-framework schedule --cluster -""",
    "demo": """examples:
  scheduling-framework demo                          # the README demo, from the installed package alone
  scheduling-framework demo --output json --seed 1
  scheduling-framework demo --print-cluster > my-cluster.yaml   # a starting point for your own file""",
    "capacity": """examples:
  scheduling-framework capacity --cluster examples/cluster.yaml --pod web.yaml
  scheduling-framework capacity --cluster dump.yaml --pod web.yaml --max 100 --output json""",
    "config": """examples:
  scheduling-framework config view --config examples/config.yaml""",
    "config view": """examples:
  scheduling-framework config view                                   # the default profile, effective
  scheduling-framework config view --config examples/config.yaml --output json
  scheduling-framework config view --config mine.yaml --output config > effective.yaml   # feeds --config""",
    "plugins": """examples:
  scheduling-framework plugins
  scheduling-framework plugins --output json""",
    "replay": """examples:
  scheduling-framework replay examples/scenarios/scale-down.yaml""",
    "sweep": """examples:
  scheduling-framework sweep examples/scenarios/node-sizes.yaml""",
    "autoscale": """examples:
  scheduling-framework autoscale --cluster dump.yaml --node-groups groups.yaml --expander least-waste
  scheduling-framework autoscale --cluster dump.yaml --node-groups groups.yaml --expander priority,price --output json
  scheduling-framework autoscale --cluster dump.yaml --node-groups groups.yaml --no-scale-up  # removable nodes
  scheduling-framework autoscale --cluster dump.yaml --node-groups groups.yaml --why --report plan.html""",
    "compare": """examples:
  scheduling-framework compare --cluster dump.yaml --a-kubernetes-version 1.35 --b-kubernetes-version 1.37
  scheduling-framework compare --cluster dump.yaml --b-config binpack.yaml --seed 1 --output json
  scheduling-framework compare --cluster dump.yaml --b-feature-gates NodeDeclaredFeatures=false --report cmp.html
  scheduling-framework compare --cluster dump.yaml --b-kubernetes-version 1.36 --mode independent
  scheduling-framework compare --cluster dump.yaml --b-config new.yaml --fail-on-change       # CI gate: exit 3""",
    "serve-extender": """examples:
  scheduling-framework serve-extender --config plugins.yaml                        # http://127.0.0.1:8888
  scheduling-framework serve-extender --config plugins.yaml --profile python-plugins \\
      --address 0.0.0.0:8888 --tls-cert tls.crt --tls-key tls.key                # in a pod
  scheduling-framework serve-extender --config plugins.yaml --cluster cluster.yaml # nodeCacheCapable""",
    "completion": """examples:
  source <(scheduling-framework completion bash)                      # this shell
  scheduling-framework completion bash > ~/.local/share/bash-completion/completions/scheduling-framework""",
}


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def add_examples(parser: argparse.ArgumentParser) -> None:
    """Give every command (and the top level) its examples, shown at the end of ``--help``."""
    def visit(p: argparse.ArgumentParser, path: str) -> None:
        text = EXAMPLES.get(path)
        if text and not p.epilog:
            p.epilog = text
            p.formatter_class = argparse.RawDescriptionHelpFormatter
        for name, child in _subparsers(p).items():
            visit(child, f"{path} {name}".strip())

    visit(parser, "")


def bash_completion(parser: argparse.ArgumentParser) -> str:
    """A bash completion script for ``scheduling-framework``: commands, sub-commands and each command's
    flags (and the values of ``choices`` flags); file names elsewhere."""
    prog = parser.prog
    cases: list[str] = []
    top = _subparsers(parser)

    def flags(p: argparse.ArgumentParser) -> list[str]:
        return [o for a in p._actions for o in a.option_strings if o.startswith("--")]

    def choices(p: argparse.ArgumentParser) -> list[str]:
        out = []
        for a in p._actions:
            if a.choices and a.option_strings and not isinstance(a, argparse._SubParsersAction):
                words = " ".join(str(c) for c in a.choices)
                for o in a.option_strings:
                    out.append(f'      {o}) COMPREPLY=($(compgen -W "{words}" -- "$cur")); return;;')
        return out

    for name, p in top.items():
        subs = _subparsers(p)
        if subs:
            for sname, sp in subs.items():
                cases.append(f'    "{name} {sname}")\n      case "$prev" in\n' + "\n".join(choices(sp)) +
                             f'\n      esac\n      opts="{" ".join(flags(sp))}";;')
            words = " ".join(subs)
            cases.append(f'    "{name} "*|"{name}")\n      COMPREPLY=($(compgen -W "{words}" -- "$cur")); return;;')
        else:
            cases.append(f'    "{name}"*)\n      case "$prev" in\n' + "\n".join(choices(p)) +
                         f'\n      esac\n      opts="{" ".join(flags(p))}";;')
    fn = "_" + prog.replace("-", "_")
    return f"""# bash completion for {prog} (generated by `{prog} completion bash`)
{fn}() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" cmd="" opts="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${{COMP_WORDS[i]}}" in -*) ;; *) cmd="${{cmd:+$cmd }}${{COMP_WORDS[i]}}";; esac
  done
  case "$cmd" in
    "")
      COMPREPLY=($(compgen -W "{" ".join(top)} --help --version" -- "$cur")); return;;
{chr(10).join(cases)}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F {fn} {prog}
"""


def add_release_flags(parser: argparse.ArgumentParser) -> None:
    """``--kubernetes-version`` and ``--feature-gates``, for every command that builds a profile."""
    from scheduling_framework.versions import NEWEST_RELEASE, SUPPORTED_RELEASES

    parser.add_argument("--kubernetes-version", metavar="1.N", default=None,
                        help=f"follow the scheduler of this Kubernetes release ({', '.join(SUPPORTED_RELEASES)}; "
                             f"default {NEWEST_RELEASE})")
    parser.add_argument("--feature-gates", metavar="NAME=BOOL,...", default=None,
                        help="feature gates to set, checked against the chosen release "
                             "(e.g. StorageCapacityScoring=true)")


def byte_size(text: str) -> int:
    """argparse type of the byte-size flags (``256Mi``, ``2G``, ``1000``)."""
    from scheduling_framework.ingest.untrusted import parse_byte_size

    try:
        return parse_byte_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_max_input_bytes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-input-bytes", type=byte_size, default=None, metavar="N",
                   help="refuse input files larger than N bytes (suffixes Ki, Mi, Gi, K, M, G; default 64Gi for the "
                        "cluster, which is streamed, after decompression for .gz; 256Mi for other files)")
