#!/usr/bin/env python3
"""Tests of scripts/peers that need no torch (CI has only python3):

  - the Python log writer (kvlog) against common/kvline through kvline_tool, both ways,
    byte for byte, and the same rejections;
  - peer.py where torch cannot be imported (a stand-in torch package on PYTHONPATH that raises
    ImportError, so the test holds on a machine that has torch too): a well-formed log with
    meta, config and result status=unsupported, exit code 4, for a kernel and an e2e cell;
  - command-line errors: exit code 2, a message naming the option, nothing on stdout;
  - nsa's --groups is the query heads per K/V head (config groups= and kv_heads=), and the
    dense workloads' (GQA: config groups= kv_heads= when G > 1, none at G = 1; tilelang's MHA
    kernel refuses it);
  - the tvm systems without TVM (and without torch): unsupported with the install command;
  - peer.exit_now (the code given, unflushed output kept) and kron.py, which ends through it.

    test_peers.py --peer scripts/peers/peer.py --kvline-tool build/tests/peers/kvline_tool
Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from tally import Tally, run_script

tally = Tally()
check = tally.check


def tool(args, stdin=None):
    res = subprocess.run([TOOL] + args, input=stdin, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("kvline_tool %s failed: %s" % (args, res.stderr))
    return res.stdout


VALUES = ["plain", "", "NVIDIA H100 80GB HBM3", 'a"b', "back\\slash", "x=y", "new\nline",
          "cr\rhere", "#hash", "tab\there", "1.2997", 'mix "q" \\ = # \n end', "trailing\\",
          "unicode \u00e9\u00df", "-", "k=v=w"]


def test_writer_matches_c():
    for val in VALUES:
        py_line = kvlog.line("meta", [("k", val), ("z", "tail")])
        c_line = tool(["write", "meta", "k", val.encode().hex(), "z", "tail".encode().hex()])
        check(py_line + "\n" == c_line, "writer: python %r != C %r for value %r"
              % (py_line, c_line, val))
        check(kvlog.needs_quotes(val) == c_line.startswith('meta k="'),
              "needs_quotes(%r) disagrees with kv_put" % val)


def test_c_parses_python_lines():
    lines = [kvlog.line("check", [("output", "out"), ("v", val), ("ok", "1")]) for val in VALUES]
    parsed = tool(["parse"], "\n".join(lines) + "\n").splitlines()
    check(len(parsed) == len(VALUES), "C parser returned %d records for %d lines"
          % (len(parsed), len(VALUES)))
    for val, rec in zip(VALUES, parsed):
        want = "ok check output=%s v=%s ok=%s" % ("out".encode().hex(), val.encode().hex(),
                                                  "1".encode().hex())
        check(rec == want, "C parse of python line for %r: %r, want %r" % (val, rec, want))


def test_python_parses_c_lines():
    for val in VALUES:
        c_line = tool(["write", "result", "status", "ok".encode().hex(),
                       "reason", val.encode().hex()])
        tag, pairs = kvlog.parse(c_line)
        check(tag == "result" and pairs == [("status", "ok"), ("reason", val)],
              "python parse of C line %r: %r %r" % (c_line, tag, pairs))


BAD_LINES = ["", "   ", "key=value only", "tag novalue", 'tag k="open', 'tag k="closed"junk',
             "tag =v", 'tag k="a\\"']


def test_same_rejections():
    parsed = tool(["parse"], "\n".join(BAD_LINES) + "\n").splitlines()
    check(len(parsed) == len(BAD_LINES), "C parser answered %d of %d bad lines"
          % (len(parsed), len(BAD_LINES)))
    for text, c_answer in zip(BAD_LINES, parsed):
        check(c_answer.startswith("err "), "C accepted bad line %r" % text)
        try:
            kvlog.parse(text)
            check(False, "python accepted bad line %r" % text)
        except kvlog.ParseError as e:
            check("column" in str(e), "python error for %r names no column: %s" % (text, e))


def run_peer(args, env_extra=None):
    return run_script(PEER, args, env_extra, timeout=120)


def parse_log(text):
    """[(tag, dict)] of a log, failing the check on any malformed line."""
    records = []
    lines = text.splitlines()
    check(lines and lines[0] == "# repro-log 1", "log does not start with '# repro-log 1': %r"
          % lines[:1])
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        try:
            tag, pairs = kvlog.parse(line)
            records.append((tag, dict(pairs)))
        except kvlog.ParseError as e:
            check(False, "log line %d malformed: %s: %r" % (n, e, line))
    c_answers = tool(["parse"], "\n".join(ln for ln in lines if not ln.startswith("#")) + "\n")
    check(all(a.startswith("ok ") for a in c_answers.splitlines()),
          "common/kvline rejects a log line:\n" + c_answers)
    return records


def test_no_torch(fake_dir, extra_args, expect_config):
    res = run_peer(["--system", "torch", "--workload", "h2o", "--seqlen", "256"] + extra_args,
                   {"PYTHONPATH": fake_dir})
    what = "no torch %s" % " ".join(extra_args)
    check(res.returncode == 4, "%s: exit %d, want 4 (stderr %s)" % (what, res.returncode,
                                                                     res.stderr))
    records = parse_log(res.stdout)
    tags = [t for t, _ in records]
    check(tags == ["meta", "config", "result"], "%s: tags %s" % (what, tags))
    meta, config, result = (dict(records).get(tag, {}) for tag in ("meta", "config", "result"))
    for key in ("gpu", "cc", "driver", "cuda", "torch", "commit", "date", "host"):
        check(key in meta, "%s: meta lacks %s" % (what, key))
    check(meta.get("torch") == "none", "%s: meta torch=%r" % (what, meta.get("torch")))
    for key, val in expect_config.items():
        check(config.get(key) == val, "%s: config %s=%r, want %r" % (what, key, config.get(key),
                                                                    val))
    check(result.get("status") == "unsupported", "%s: status %r" % (what, result.get("status")))
    check("torch" in result.get("reason", "").lower(), "%s: reason %r names no torch"
          % (what, result.get("reason")))
    check("gflops_s" not in result and "avg_ms" not in result, "%s: result has timings" % what)


def test_exit_now():
    """peer.exit_now: the exit code given, and what was written but not yet flushed arrives."""
    code = ("import sys; sys.path.insert(0, %r); import peer; sys.stdout.write('unflushed'); "
            "sys.stderr.write('err'); peer.exit_now(7)" % os.path.dirname(PEER))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered stdout
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env)
    check(res.returncode == 7, "exit_now(7): exit %d (stderr %s)" % (res.returncode, res.stderr))
    check(res.stdout == "unflushed" and res.stderr == "err",
          "exit_now: stdout %r, stderr %r, want the unflushed writes" % (res.stdout, res.stderr))


def test_kron_no_torch(fake_dir):
    """kron.py ends through exit_now: without torch, a whole log and exit code 4."""
    kron = os.path.join(os.path.dirname(PEER), "kron.py")
    res = subprocess.run([sys.executable, kron, "--system", "torch-v2", "--shape", "4x8x8",
                          "--pass", "bwd"], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=fake_dir))
    check(res.returncode == 4, "kron.py without torch: exit %d, want 4 (stderr %s)"
          % (res.returncode, res.stderr))
    records = parse_log(res.stdout)
    result = dict(records).get("result", {})
    check([t for t, _ in records][-1:] == ["result"] and result.get("status") == "unsupported",
          "kron.py without torch: records %s, result %r" % ([t for t, _ in records], result))


def test_nsa_groups(fake_dir):
    """--groups is the query heads per K/V head (the tile-benchmark seed's and TileLang's
    groups: head_kv = heads // groups), as attnvar's: the config line (written without torch)
    names both groups and kv_heads. H16 G16 is one K/V head, G4 four, G1 (the default) MHA."""
    for extra, groups, kv_heads in ((["--groups", "16"], "16", "1"), (["--groups", "4"], "4", "4"),
                                    (["--groups", "1"], "1", "16"), ([], "1", "16")):
        res = run_peer(["--system", "torch", "--workload", "nsa", "--heads", "16", "--seqlen",
                        "256", "--dim", "32", "--block-size", "32", "--selected-blocks", "2"]
                       + extra, {"PYTHONPATH": fake_dir})
        what = "nsa --heads 16 %s" % " ".join(extra)
        check(res.returncode == 4, "%s without torch: exit %d, want 4 (stderr %s)"
              % (what, res.returncode, res.stderr[-300:]))
        config = dict(parse_log(res.stdout)).get("config", {})
        check(config.get("groups") == groups and config.get("kv_heads") == kv_heads,
              "%s: config groups=%r kv_heads=%r, want %s and %s" % (what, config.get("groups"),
                                                                   config.get("kv_heads"), groups,
                                                                   kv_heads))
    import workloads
    blocks = workloads.Blocks(groups=16)
    check(blocks.kv_heads(16) == 1 and workloads.Blocks(groups=4).kv_heads(16) == 4
          and workloads.Blocks().kv_heads(16) == 16, "Blocks.kv_heads: heads // groups")


def test_dense_groups(fake_dir):
    """GQA on the dense workloads: --groups G is accepted, the config line (written without
    torch) names groups and kv_heads when G > 1 and neither at G = 1 (MHA, the log as
    before); the TileLang systems refuse G > 1 for dense keys (the seed's MHA kernel)."""
    for workload in ("attn", "h2o", "corm"):
        for extra, groups, kv_heads in ((["--groups", "2"], "2", "4"),
                                        (["--groups", "8"], "8", "1"),
                                        (["--groups", "1"], None, None), ([], None, None)):
            res = run_peer(["--system", "torch", "--workload", workload, "--heads", "8",
                            "--seqlen", "64"] + extra, {"PYTHONPATH": fake_dir})
            what = "%s --heads 8 %s" % (workload, " ".join(extra))
            check(res.returncode == 4, "%s without torch: exit %d, want 4 (stderr %s)"
                  % (what, res.returncode, res.stderr[-300:]))
            config = dict(parse_log(res.stdout)).get("config", {})
            check(config.get("groups") == groups and config.get("kv_heads") == kv_heads,
                  "%s: config groups=%r kv_heads=%r, want %r and %r" % (
                      what, config.get("groups"), config.get("kv_heads"), groups, kv_heads))
    import systems
    import workloads
    for system in systems.TILELANG:
        try:
            systems.build(system, "attn", 256, None, groups=2)
            why = ""
        except systems.Unsupported as e:
            why = str(e)
        check("GQA" in why and "MHA" in why, "%s attn --groups 2: reason %r" % (system, why))
    check(workloads.kv_heads_of(8, 2) == 4 and workloads.kv_heads_of(8, 8) == 1,
          "kv_heads_of: heads // groups")
    try:
        workloads.kv_heads_of(6, 4)
        check(False, "kv_heads_of(6, 4) accepted")
    except ValueError:
        pass


def test_tilelang_missing(fake_dir):
    """Without TileLang (a stand-in tilelang package that raises ImportError, so the test holds
    where TileLang is installed) the seed's two backends are unsupported with the reason and the
    install command; the workloads their kernels cannot express are refused with the reason
    before anything is imported."""
    os.mkdir(os.path.join(fake_dir, "tilelang"))
    with open(os.path.join(fake_dir, "tilelang", "__init__.py"), "w") as f:
        f.write('raise ImportError("stand-in tilelang of test_peers.py")\n')
    sys.path.insert(0, fake_dir)
    try:
        import systems
        import tilelang_backend
        for system in tilelang_backend.SYSTEMS:
            check(system in systems.SYSTEMS and system in systems.COMPILED,
                  "%s is not a compiled peer system" % system)
            try:
                tilelang_backend.load(system)
                check(False, "%s loaded with a TileLang that cannot import" % system)
            except systems.Unsupported as e:
                check("stand-in tilelang" in str(e) and "scripts/install.sh --peers" in str(e),
                      "%s: reason %r lacks the import error or the install command" % (system, e))
        for workload, words in (("h2o", "column reductions"), ("gemma2", "no score modifier")):
            try:
                systems.build("tilelang", workload, 256, None)
                check(False, "tilelang built %s" % workload)
            except systems.Unsupported as e:
                check(words in str(e), "tilelang %s: reason %r lacks %r" % (workload, e, words))
        import tilelang_gemm
        check(tilelang_gemm.refuses("fp16") is None and tilelang_gemm.refuses("bf16") is None
              and "tf32" in (tilelang_gemm.refuses("fp32") or ""),
              "tilelang_gemm: fp16/bf16 served, fp32 refused naming tf32")
    finally:
        sys.path.remove(fake_dir)


def test_tvm_missing(fake_dir):
    """Without TVM (a stand-in tvm package that raises ImportError, found first through
    REPRO_TVM_PATH, so the test holds where TVM is installed) the tvm systems are unsupported
    with the reason and the install command; without torch the cell's reason names both; the
    tuning options belong to tvm-ms alone, which needs a budget."""
    tvm_dir = os.path.join(fake_dir, "tvm-site")
    os.makedirs(os.path.join(tvm_dir, "tvm"))
    with open(os.path.join(tvm_dir, "tvm", "__init__.py"), "w") as f:
        f.write('raise ImportError("stand-in tvm of test_peers.py")\n')
    saved = os.environ.get("REPRO_TVM_PATH")
    os.environ["REPRO_TVM_PATH"] = tvm_dir
    try:
        import systems
        import tvm_backend
        for system in tvm_backend.SYSTEMS:
            check(system in systems.SYSTEMS and system in systems.COMPILED,
                  "%s is not a compiled peer system" % system)
            try:
                tvm_backend.load(system, on_gpu=False)
                check(False, "%s loaded with a TVM that cannot import" % system)
            except systems.Unsupported as e:
                check("stand-in tvm" in str(e) and "scripts/install.sh --tvm" in str(e)
                      and "apache-tvm==0.27.0.post1" in str(e),
                      "%s: reason %r lacks the import error or the install command" % (system, e))
        check(systems.TUNED == ("tvm-ms",), "systems.TUNED is %r" % (systems.TUNED,))
    finally:
        if saved is None:
            del os.environ["REPRO_TVM_PATH"]
        else:
            os.environ["REPRO_TVM_PATH"] = saved
        sys.path[:] = [p for p in sys.path if p != tvm_dir]
    for system, extra in (("tvm", []), ("tvm-ms", ["--tune-trials", "4", "--tune-db", fake_dir])):
        res = run_peer(["--system", system, "--workload", "attn", "--seqlen", "256"] + extra,
                       {"PYTHONPATH": fake_dir, "REPRO_TVM_PATH": tvm_dir})
        what = "%s without torch" % system
        check(res.returncode == 4, "%s: exit %d, want 4 (stderr %s)" % (what, res.returncode,
                                                                       res.stderr[-300:]))
        records = dict(parse_log(res.stdout))
        config, result = records.get("config", {}), records.get("result", {})
        check(config.get("tune_trials") == ("4" if extra else "0") and config.get("impl") == "none",
              "%s: config tune_trials=%r impl=%r" % (what, config.get("tune_trials"),
                                                     config.get("impl")))
        reason = result.get("reason", "")
        check(result.get("status") == "unsupported" and "PyTorch" in reason
              and "scripts/install.sh --tvm" in reason,
              "%s: status %r, reason %r names not both torch and TVM's install"
              % (what, result.get("status"), reason))
    for extra, want in (([], False), (["all"], True)):
        res = subprocess.run([sys.executable, os.path.join(os.path.dirname(PEER), "systems.py"),
                              "names"] + extra, capture_output=True, text=True)
        names = res.stdout.split()
        check(res.returncode == 0 and "tvm" in names and ("tvm-ms" in names) == want
              and "torch" in names, "systems.py names %s: %r" % (" ".join(extra), names))
    res = subprocess.run([sys.executable, os.path.join(os.path.dirname(PEER), "tvm_backend.py"),
                          "pins", "required"], capture_output=True, text=True)
    check(res.returncode == 0 and "apache-tvm==0.27.0.post1" in res.stdout.split()
          and "apache-tvm-ffi==0.1.14.post1" in res.stdout.split(),
          "tvm_backend.py pins required: %r" % res.stdout)


def test_commit_from_the_build(fake_dir):
    """The meta line's commit is the build's (REPRO_COMMIT, then REPRO_BUILD_DIR/bin/COMMIT, then
    build/bin/COMMIT), not git's:
    a tree copied with a stale .git (the GPU machines) must not name another commit."""
    res = run_peer(["--system", "torch", "--workload", "h2o", "--seqlen", "256"],
                   {"PYTHONPATH": fake_dir, "REPRO_COMMIT": "feedbee"})
    meta = dict(parse_log(res.stdout)).get("meta", {})
    check(meta.get("commit") == "feedbee", "meta commit=%r, want the build's 'feedbee'"
          % meta.get("commit"))
    # the runner's build folder (REPRO_BUILD_DIR, as gpu_run.sh sets it to a carried build)
    with tempfile.TemporaryDirectory() as build:
        os.mkdir(os.path.join(build, "bin"))
        with open(os.path.join(build, "bin", "COMMIT"), "w") as f:
            f.write("c0ffee1\n")
        env = {"PYTHONPATH": fake_dir, "REPRO_BUILD_DIR": build, "REPRO_COMMIT": ""}
        res = run_peer(["--system", "torch", "--workload", "h2o", "--seqlen", "256"], env)
        meta = dict(parse_log(res.stdout)).get("meta", {})
        check(meta.get("commit") == "c0ffee1", "meta commit=%r, want REPRO_BUILD_DIR's 'c0ffee1'"
              % meta.get("commit"))


CLI_ERRORS = [
    (["--workload", "h2o"], "--system"),
    (["--system", "torch"], "--workload"),
    (["--system", "tensorrt", "--workload", "h2o"], "--system"),
    (["--system", "torch", "--workload", "mha"], "--workload"),
    (["--system", "torch", "--workload", "h2o", "--seqlen", "0"], "--seqlen"),
    (["--system", "torch", "--workload", "h2o", "--seqlen", "4k"], "--seqlen"),
    (["--system", "torch", "--workload", "h2o", "--warmup", "-1"], "--warmup"),
    (["--system", "torch", "--workload", "h2o", "--runs", "0"], "--runs"),
    (["--system", "torch", "--workload", "h2o", "--device", "tpu"], "--device"),
    (["--system", "torch", "--workload", "h2o", "--bogus"], "--bogus"),
    (["--system", "sdpa-cudnn", "--workload", "attn", "--causal", "2"], "--causal"),
    (["--system", "sdpa-cudnn", "--workload", "attn", "--causal", "yes"], "--causal"),
    (["--system", "sdpa-cudnn", "--workload", "attn", "--dtype", "fp32"], "--dtype"),
    (["--system", "sdpa-cudnn", "--workload", "attn", "--check-pairs", "-1"], "--check-pairs"),
    (["--system", "torch", "--workload", "h2o", "--e2e", "--batch", "2"], "--batch"),
    (["--system", "torch", "--workload", "h2o", "--e2e", "--hidden", "100", "--heads", "3"],
     "--hidden"),
    (["--system", "torch", "--workload", "h2o", "--block-size", "16"],
     "--block-size is an option of the selected-block workloads, not of --workload h2o"),
    (["--system", "torch", "--workload", "roco", "--groups", "2", "--selected-blocks", "2"],
     "--selected-blocks is an option of the selected-block workloads"),
    (["--system", "torch", "--workload", "h2o", "--heads", "6", "--groups", "4"],
     "--groups 4 must divide --heads 6 (--groups is the query heads per K/V head"),
    (["--system", "sdpa-flash", "--workload", "attn", "--heads", "8", "--groups", "16"],
     "--groups 16 must divide --heads 8"),
    (["--system", "torch", "--workload", "kf", "--groups", "0"], "--groups"),
    (["--system", "torch", "--workload", "nsa", "--heads", "16", "--groups", "3"],
     "--groups 3 must divide --heads 16 (--groups is the query heads per K/V head"),
    (["--system", "torch", "--workload", "nsa", "--heads", "16", "--groups", "32"],
     "--groups 32 must divide --heads 16"),
    (["--system", "tvm-ms", "--workload", "attn"], "--tune-trials N"),
    (["--system", "tvm-ms", "--workload", "attn", "--tune-trials", "0"], "--tune-trials"),
    (["--system", "tvm", "--workload", "attn", "--tune-trials", "8"],
     "--tune-trials is tvm-ms's (MetaSchedule), not --system tvm's"),
    (["--system", "torch", "--workload", "attn", "--tune-db", "/tmp"], "--tune-db is tvm-ms's"),
]


def test_cli_errors():
    for args, option in CLI_ERRORS:
        res = run_peer(args)
        check(res.returncode == 2, "%s: exit %d, want 2" % (args, res.returncode))
        check(option in res.stderr, "%s: stderr does not name %s: %r" % (args, option,
                                                                         res.stderr[-300:]))
        check(res.stdout == "", "%s: usage error wrote to stdout: %r" % (args, res.stdout))


def test_variants():
    """--causal/--dtype without torch: the config line carries them, the new SDPA systems are
    accepted; the column workloads refuse them with the reason (no torch needed for that);
    the sampled check's pairs are spread and distinct."""
    import systems
    import workloads
    for system in ("sdpa-efficient", "sdpa-compiled"):
        check(system in systems.SYSTEMS, "%s is not a peer system" % system)
    check("sdpa-compiled" in systems.COMPILED, "sdpa-compiled does not report compile_s")
    check(systems.variant_missing("attn", False, "bf16") is None,
          "attn refuses non-causal bf16")
    why = systems.variant_missing("h2o", False, "fp16") or ""
    check("COL_SUM" in why and "causal" in why, "h2o non-causal: reason %r" % why)
    check(systems.variant_missing("h2o", True, "fp16") is None, "h2o causal fp16 refused")
    check(workloads.sample_pairs(2, 3, 0) is None, "0 pairs is not 'all'")
    check(workloads.sample_pairs(2, 3, 6) is None, "n >= B*H is not 'all'")
    pairs = workloads.sample_pairs(16, 96, 8)
    check(pairs is not None and len(pairs) == 8 and pairs[0] == (0, 0) and pairs[-1] == (15, 95)
          and len(set(pairs)) == 8, "sample_pairs(16, 96, 8) = %r" % (pairs,))


def test_variant_logs(fake_dir):
    res = run_peer(["--system", "sdpa-compiled", "--workload", "attn", "--seqlen", "256",
                    "--causal", "0", "--dtype", "bf16", "--check-pairs", "4"],
                   {"PYTHONPATH": fake_dir})
    check(res.returncode == 4, "sdpa-compiled without torch: exit %d, want 4" % res.returncode)
    config = dict(parse_log(res.stdout)).get("config", {})
    check(config.get("dtype") == "bf16" and config.get("causal") == "0",
          "config dtype=%r causal=%r, want bf16 0" % (config.get("dtype"), config.get("causal")))
    res = run_peer(["--system", "sdpa-efficient", "--workload", "attn", "--seqlen", "256"],
                   {"PYTHONPATH": fake_dir})
    config = dict(parse_log(res.stdout)).get("config", {})
    check(config.get("dtype") == "fp16" and config.get("causal") == "1",
          "defaults: config dtype=%r causal=%r" % (config.get("dtype"), config.get("causal")))


def main():
    global PEER, TOOL, kvlog
    p = argparse.ArgumentParser()
    p.add_argument("--peer", required=True)
    p.add_argument("--kvline-tool", required=True)
    a = p.parse_args()
    PEER, TOOL = os.path.abspath(a.peer), os.path.abspath(a.kvline_tool)
    sys.path.insert(0, os.path.dirname(PEER))
    import kvlog as kvlog_module
    kvlog = kvlog_module

    test_writer_matches_c()
    test_c_parses_python_lines()
    test_python_parses_c_lines()
    test_same_rejections()
    with tempfile.TemporaryDirectory() as fake_dir:
        os.mkdir(os.path.join(fake_dir, "torch"))
        with open(os.path.join(fake_dir, "torch", "__init__.py"), "w") as f:
            f.write('raise ImportError("stand-in torch of test_peers.py: no torch here")\n')
        test_commit_from_the_build(fake_dir)
        test_kron_no_torch(fake_dir)
        test_tilelang_missing(fake_dir)
        test_tvm_missing(fake_dir)
        test_nsa_groups(fake_dir)
        test_dense_groups(fake_dir)
        test_variant_logs(fake_dir)
        test_no_torch(fake_dir, [], {"workload": "h2o", "system": "torch", "seqlen": "256",
                                     "dtype": "fp16"})
        test_no_torch(fake_dir, ["--e2e", "--layers", "2"],
                      {"experiment": "e2e", "layers": "2", "workload": "h2o"})
    test_cli_errors()
    test_variants()
    test_exit_now()
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
