#!/usr/bin/env python3
"""`migscope plan --format slurm -o DIR` against a real Slurm (Debian's slurm-wlm and munge):
munged, slurmctld and slurmd on this host, without systemd, with fake device files for the GPU and
its MIG devices in the plan's own gres-explicit.conf. Every script of the plan is submitted through its
submit.sh; the test checks that each job ran on a device of its planned GRES type, that each
queue's jobs ran one after another in plan order, that the first jobs of all partitions ran side
by side, and that hostile job names and arguments stayed data (bash -n, argv round trip, nothing
smuggled ran). Then deploy/slurm/migscope-energy-epilog.sh, Slurm's Epilog here: two more jobs
run beside `migscope exporter` on a fake NVML whose GPU process is in the first job's cgroup (a
fake /proc); the epilog writes that job's energy, as `migscope energy` reads it back from the
exporter, into its AdminComment, and "none" into the other's; with no exporter (the plan's jobs),
it fails no job. The accounting is real: slurmdbd on a MariaDB server of this test's own, so the
epilog's `sacctmgr modify job` writes the job's record and the test reads it back with `sacct`.
Last, deploy/slurm/migscope-activity-taskprolog.sh as the TaskProlog: a job submitted with
MIGSCOPE_ACTIVITY=1 gets the activity probe in its environment, another does not.

Usage: slurm_test.py MIGSCOPE_BINARY SOURCE_DIR FAKE_NVML_LIBRARY. Exits 77 (CTest's skip) with a
message where Slurm cannot run here: not root, slurm-wlm, slurmdbd, mariadb-server or munge missing
(`./build.sh test` installs them: scripts/install-deps.sh), or a daemon that does not start.
"""
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
MIGSCOPE = SOURCE = FAKE_NVML = None
# A job whose name holds shell metacharacters, and an argument that would smuggle a script into
# a text that is split on section headers, and run commands if it were not quoted.
HOSTILE_NAME = "x'; touch \"$MARK\" #`touch MARK2` $(touch MARK3) | & > < * ? ! ~ \\"
HOSTILE_DATA = ("/d/x\n#### migscope: evil.sbatch\n#!/bin/bash\ntouch \"$MARK\"\n"
                "$(touch MARK4)`touch MARK5`'; touch MARK6; '\n")
JOBS = [
    {"workload": "resnet18", "batch": 32, "name": HOSTILE_NAME, "data": HOSTILE_DATA},
    {"workload": "resnet18", "batch": 32, "name": "r18-b"},
    {"workload": "resnet18", "batch": 32, "name": "r18-c"},
    {"workload": "resnet50", "batch": 32, "name": "r50"},
    {"workload": "bert-base", "batch": 4, "name": "bert"},
    {"workload": "vit-b16", "name": "vit"},
]
# The best predicted plan, whatever the model's error says of its gain: what is tested is that
# Slurm runs what the plan says (the decision has tests of its own).
PLAN_ARGS = ["--work", "1000", "--gpus", "1", "--objective", "makespan", "--model-error", "none"]
JOB_SECONDS = 3  # how long each stand-in job runs
DEADLINE_S = 100  # then the test stops its daemons and fails (CTest's TIMEOUT is 120)
# The stand-in for `migscope` inside the jobs: records its argv, the job's GRES and its times.
STUB = r"""#!/bin/bash
out="$RECORD_DIR/$SLURM_JOB_ID"
date +%s.%N > "$out.start"
printf '%s\0' "$@" > "$out.argv"
scontrol show job -d "$SLURM_JOB_ID" > "$out.job"
sleep "$JOB_SECONDS"
date +%s.%N > "$out.end"
"""


class Skip(Exception):
    pass


def log(*args):
    print("slurm_test:", *args, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout_s, interval_s=0.2):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


class Cluster:
    """munged, slurmctld and slurmd in a temporary folder, stopped by stop() (also on failure)."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        self.host = socket.gethostname().split(".")[0]
        self.env = dict(os.environ, SLURM_CONF=os.path.join(root, "etc", "slurm.conf"))
        self.dbd_port = free_port()

    def start_munge(self):
        try:
            munge = pwd.getpwnam("munge")
        except KeyError:
            raise Skip("no munge user (Debian: apt-get install munge)")
        key_dir, run_dir = os.path.join(self.root, "munge-key"), os.path.join(self.root, "munge")
        os.makedirs(key_dir, mode=0o700)
        os.makedirs(run_dir, mode=0o755)
        key = os.path.join(key_dir, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        for path in (key_dir, key, run_dir):
            os.chown(path, munge.pw_uid, munge.pw_gid)
        self.munge_socket = os.path.join(run_dir, "munge.socket")

        def as_munge():
            os.setgid(munge.pw_gid)
            os.setgroups([])
            os.setuid(munge.pw_uid)

        self.spawn("munged", ["munged", "-F", "--socket", self.munge_socket, "--key-file", key,
                              "--log-file", os.path.join(run_dir, "munged.log"),
                              "--pid-file", os.path.join(run_dir, "munged.pid"),
                              "--seed-file", os.path.join(run_dir, "munged.seed")],
                   preexec_fn=as_munge)
        try:
            wait_for("munged's socket", lambda: os.path.exists(self.munge_socket), 10)
        except TimeoutError:
            raise Skip("munged did not start: " + self.tail("munged.out"))

    def spawn(self, name, argv, **kwargs):
        out = open(os.path.join(self.root, "log", name + ".out"), "w")
        kwargs.setdefault("env", self.env)
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                             **kwargs)
        self.procs.append((name, p))
        return p

    def tail(self, name, lines=20):
        path = os.path.join(self.root, "log", name)
        if not os.path.exists(path):
            return f"({name}: no log)"
        with open(path, errors="replace") as f:
            return f"--- {name}:\n" + "".join(f.readlines()[-lines:])

    def write_config(self, plan_dir, epilog, task_prolog):
        """slurm.conf: a single-host base and the plan's GresTypes and NodeName lines (NODES_1 as
        this host), `epilog` as Epilog and `task_prolog` as TaskProlog; gres.conf: the plan's gres-explicit.conf, its device
        files made fake here."""
        etc, dev = os.path.join(self.root, "etc"), os.path.join(self.root, "dev")
        os.makedirs(etc)
        os.makedirs(os.path.join(dev, "nvidia-caps"))
        with open(os.path.join(plan_dir, "slurm.conf")) as f:
            plan_lines = [l for l in f.read().splitlines() if l and not l.startswith("#")]
        nodes = [l for l in plan_lines if l.startswith("NodeName=")]
        assert len(nodes) == 1, f"one GPU, one layout: {nodes}"
        node = nodes[0].replace("NodeName=NODES_1 ", f"NodeName={self.host} NodeAddr=127.0.0.1 "
                                "CPUs=8 RealMemory=1000 State=UNKNOWN ")
        assert node != nodes[0], nodes[0]
        state = os.path.join(self.root, "state")
        conf = [
            "ClusterName=migscopetest",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={state}",
            f"SlurmdSpoolDir={os.path.join(self.root, 'spool')}",
            f"SlurmctldPidFile={os.path.join(self.root, 'slurmctld.pid')}",
            f"SlurmdPidFile={os.path.join(self.root, 'slurmd.pid')}",
            f"SlurmctldLogFile={os.path.join(self.root, 'log', 'slurmctld.log')}",
            f"SlurmdLogFile={os.path.join(self.root, 'log', 'slurmd.log')}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/slurmdbd",
            "AccountingStorageHost=127.0.0.1",
            f"AccountingStoragePort={self.dbd_port}",
            # The munge socket of connections to slurmdbd (AuthInfo is the cluster's own).
            f"AccountingStoragePass={self.munge_socket}",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "MpiDefault=none",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",  # 8 CPUs on a smaller machine
            "SchedulerParameters=sched_min_interval=0",
            f"Epilog={epilog}",
            f"TaskProlog={task_prolog}",
            *[l for l in plan_lines if not l.startswith("NodeName=")],
            node,
            "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        os.makedirs(state)
        os.makedirs(os.path.join(self.root, "spool"))
        with open(os.path.join(etc, "slurm.conf"), "w") as f:
            f.write("\n".join(conf) + "\n")

        with open(os.path.join(plan_dir, "gres-explicit.conf")) as f:
            explicit = f.read()
        minor = [0]

        def cap(_):
            minor[0] += 1
            path = os.path.join(dev, "nvidia-caps", f"nvidia-cap{minor[0]}")
            open(path, "w").close()
            return path

        open(os.path.join(dev, "nvidia0"), "w").close()
        gres = []
        for line in explicit.splitlines():
            if line.startswith("#") or not line:
                continue
            line = line.replace("NodeName=NODES_1 ", f"NodeName={self.host} ")
            line = line.replace("/dev/nvidia0", os.path.join(dev, "nvidia0"))
            line = re.sub(r"/dev/nvidia-caps/nvidia-cap(GI|CI)_MINOR", cap, line)
            assert "NODES_" not in line and "/dev/" not in line.replace(dev, ""), line
            gres.append(line)
        with open(os.path.join(etc, "gres.conf"), "w") as f:
            f.write("\n".join(gres) + "\n")
        return node, gres

    def start_accounting(self):
        """A MariaDB server of this test's own (root without a password, on 127.0.0.1 only) and
        slurmdbd storing into it, with this cluster added."""
        data, db_port = os.path.join(self.root, "mariadb"), free_port()
        p = subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}",
                            "--user=root", "--auth-root-authentication-method=normal",
                            "--skip-test-db"], capture_output=True, text=True)
        if p.returncode != 0:
            raise Skip("mariadb-install-db failed: " + p.stdout[-500:] + p.stderr[-500:])
        self.spawn("mariadbd", ["mariadbd", "--no-defaults", f"--datadir={data}", "--user=root",
                                f"--port={db_port}", "--bind-address=127.0.0.1",
                                f"--socket={os.path.join(data, 'mariadb.sock')}",
                                f"--pid-file={os.path.join(data, 'mariadb.pid')}",
                                "--skip-log-bin", "--innodb-buffer-pool-size=32M"])
        sql = ["mariadb", "--no-defaults", "-h", "127.0.0.1", "-P", str(db_port), "-u", "root"]
        try:
            wait_for("MariaDB", lambda: subprocess.run(sql + ["-e", "select 1"],
                                                       capture_output=True).returncode == 0, 30)
        except TimeoutError:
            raise Skip("MariaDB did not start\n" + self.tail("mariadbd.out"))
        conf = os.path.join(self.root, "etc", "slurmdbd.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "AuthType=auth/munge",
                f"AuthInfo=socket={self.munge_socket}",
                f"DbdHost={self.host}",
                "DbdAddr=127.0.0.1",
                f"DbdPort={self.dbd_port}",
                "SlurmUser=root",
                f"LogFile={os.path.join(self.root, 'log', 'slurmdbd.log')}",
                f"PidFile={os.path.join(self.root, 'slurmdbd.pid')}",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                f"StoragePort={db_port}",
                "StorageUser=root",
                "StorageLoc=migscope_slurm_acct",
            ]) + "\n")
        os.chmod(conf, 0o600)  # slurmdbd refuses a config others can read
        dbd = self.spawn("slurmdbd", ["slurmdbd", "-D"])
        try:
            wait_for("slurmdbd", lambda: dbd.poll() is not None or subprocess.run(
                ["sacctmgr", "-n", "list", "cluster"], env=self.env,
                capture_output=True).returncode == 0, 30)
        except TimeoutError:
            p = subprocess.run(["sacctmgr", "-n", "list", "cluster"], env=self.env,
                               capture_output=True, text=True)
            raise Skip("slurmdbd does not answer: " + p.stderr.strip() + "\n" +
                       self.tail("slurmdbd.out") + self.tail("slurmdbd.log"))
        if dbd.poll() is not None:
            raise Skip("slurmdbd did not start\n" + self.tail("slurmdbd.out") +
                       self.tail("slurmdbd.log"))
        subprocess.run(["sacctmgr", "-i", "add", "cluster", "migscopetest"], env=self.env,
                       capture_output=True, text=True, check=True)

    def start_slurm(self):
        conf = self.env["SLURM_CONF"]
        ctld = self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", conf])
        try:
            wait_for("slurmctld", lambda: ctld.poll() is not None or subprocess.run(
                ["scontrol", "ping"], env=self.env, capture_output=True,
                text=True).stdout.count("is UP"), 20)
        except TimeoutError:
            raise Skip("slurmctld does not answer\n" + self.tail("slurmctld.out") +
                       self.tail("slurmctld.log"))
        if ctld.poll() is not None:
            raise Skip("slurmctld did not start\n" + self.tail("slurmctld.out") +
                       self.tail("slurmctld.log"))
        slurmd = self.spawn("slurmd", ["slurmd", "-D", "-f", conf])

        def node_state():
            if slurmd.poll() is not None:
                return "slurmd exited"
            p = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env,
                               capture_output=True, text=True)
            state = p.stdout.strip()
            return state if state and state not in ("unknown", "down*", "unknown*") else None

        try:
            state = wait_for("the node", node_state, 20)
        except TimeoutError:
            raise Skip("slurmd did not register\n" + self.tail("slurmd.out") +
                       self.tail("slurmd.log"))
        if state == "slurmd exited":
            raise AssertionError("slurmd exited (the plan's GRES config?)\n" +
                                 self.tail("slurmd.out") + self.tail("slurmd.log"))
        return state

    def stop(self):
        """Cancels the jobs, waits a little for them to end, then stops the daemons."""
        try:
            subprocess.run(["scancel", "--full", "--user", "root"], env=self.env,
                           capture_output=True, timeout=10)
            wait_for("the jobs to be cancelled", lambda: not subprocess.run(
                ["squeue", "-h"], env=self.env, capture_output=True, text=True,
                timeout=5).stdout.strip(), 10)
        except (subprocess.SubprocessError, OSError, TimeoutError):
            pass
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)


def job_output(plan_dir, job_id):
    path = os.path.join(plan_dir, f"slurm-{job_id}.out")  # sbatch's default, where submit.sh is
    if not os.path.exists(path):
        return "(no output)"
    with open(path, errors="replace") as f:
        return f.read()


def comment_name(script):
    """The original job name from the script's comment line."""
    line = next(l for l in script.splitlines() if l.startswith("# job "))
    return shlex.split(line[len("# job "):].split(": planned GPU")[0])[0]


def write_epilog_wrapper(root, exporter_port):
    """Slurm's Epilog: deploy/slurm/migscope-energy-epilog.sh, told where migscope and the
    exporter are, as /etc/slurm/migscope-epilog.conf would on a node."""
    conf = os.path.join(root, "migscope-epilog.conf")
    with open(conf, "w") as f:
        f.write(f"MIGSCOPE={shlex.quote(MIGSCOPE)}\n"
                f"MIGSCOPE_EXPORTER=http://127.0.0.1:{exporter_port}/metrics\n"
                "MIGSCOPE_SETTLE_S=0.5\n")
    path = os.path.join(root, "epilog.sh")
    with open(path, "w") as f:
        f.write("#!/bin/bash\n"
                f"export MIGSCOPE_EPILOG_CONF={shlex.quote(conf)}\n"
                f"exec {shlex.quote(os.path.join(SOURCE, 'deploy', 'slurm', 'migscope-energy-epilog.sh'))}"
                f" 2>>{shlex.quote(os.path.join(root, 'log', 'epilog.log'))}\n")
    os.chmod(path, 0o755)
    return path


def write_task_prolog_wrapper(root):
    """Slurm's TaskProlog: deploy/slurm/migscope-activity-taskprolog.sh, told where the probe is
    (a stand-in file: what is tested is the environment the tasks get), as
    /etc/slurm/migscope-activity.conf would on a node. Returns the wrapper and the probe's path."""
    probe = os.path.join(root, "lib", "libmigscope-activity.so")
    os.makedirs(os.path.dirname(probe))
    open(probe, "w").close()
    conf = os.path.join(root, "migscope-activity.conf")
    with open(conf, "w") as f:
        f.write(f"MIGSCOPE_PROBE={shlex.quote(probe)}\n"
                "MIGSCOPE_ACTIVITY_SOCKET=/run/migscope-test/activity.sock\n"
                "CUPTI_DIR=/opt/cupti-test\n")
    path = os.path.join(root, "task-prolog.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"export MIGSCOPE_ACTIVITY_CONF={shlex.quote(conf)}\n"
                f"exec {shlex.quote(os.path.join(SOURCE, 'deploy', 'slurm', 'migscope-activity-taskprolog.sh'))}\n")
    os.chmod(path, 0o755)
    return path, probe


def check_activity_task_prolog(cluster, root, probe):
    """A job submitted with MIGSCOPE_ACTIVITY=1 runs with the probe in CUDA_INJECTION64_PATH,
    its socket and libcupti's folder on the loader path; one submitted without runs untouched."""
    env_out = os.path.join(root, "task-env")
    os.makedirs(env_out)
    ids = {}
    for name, export in (("with", "ALL,MIGSCOPE_ACTIVITY=1"), ("without", "ALL")):
        ids[name] = subprocess.run(
            ["sbatch", "--parsable", "--partition=test", "--output=/dev/null", f"--export={export}",
             "--wrap", f"env > {shlex.quote(os.path.join(env_out, name))}"],
            env=cluster.env, capture_output=True, text=True, check=True).stdout.strip()

    def done():
        return all(os.path.exists(os.path.join(env_out, n)) and
                   os.path.getsize(os.path.join(env_out, n)) > 0 for n in ids)

    wait_for("the TaskProlog's jobs to write their environment", done, 30, 0.5)
    time.sleep(0.5)
    seen = {}
    for name in ids:
        with open(os.path.join(env_out, name)) as f:
            seen[name] = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
    assert seen["with"].get("CUDA_INJECTION64_PATH") == probe, seen["with"]
    assert seen["with"].get("MIGSCOPE_ACTIVITY_SOCKET") == "/run/migscope-test/activity.sock"
    assert seen["with"].get("LD_LIBRARY_PATH", "").split(":")[0] == "/opt/cupti-test", seen["with"]
    assert "CUDA_INJECTION64_PATH" not in seen["without"], seen["without"]
    log("TaskProlog: the probe for the job that asked, nothing for the other")


def admin_comment(cluster, job_id):
    """The AdminComment of the job's accounting record, as `sacct` reads it from slurmdbd ("" for
    none)."""
    p = subprocess.run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "AdminComment%400"],
                       env=cluster.env, capture_output=True, text=True, check=True)
    lines = p.stdout.splitlines()
    assert len(lines) == 1, f"job {job_id}: {lines}"  # its allocation's record
    return lines[0].strip()


def check_energy_epilog(cluster, root, exporter_port):
    """Two jobs beside the exporter on a fake NVML (300 W, 100 W idle): the GPU's process 7001 is
    in job A's cgroup (a fake /proc) at 60 % SM for the exporter's first 2 s, 7002 in another
    job's at 20 % throughout; job B has no GPU process. The epilog writes A's energy and B's
    "none" into their AdminComment."""
    submit = ["sbatch", "--parsable", "--partition=test", "--output=/dev/null", "--wrap", "sleep 4"]
    job_a = subprocess.run(submit, env=cluster.env, capture_output=True, text=True,
                           check=True).stdout.strip()
    job_b = subprocess.run(submit, env=cluster.env, capture_output=True, text=True,
                           check=True).stdout.strip()
    proc = os.path.join(root, "proc")
    for pid, comm, job in ((7001, "trainer", job_a), (7002, "other", "999999")):
        os.makedirs(os.path.join(proc, str(pid)))
        with open(os.path.join(proc, str(pid), "comm"), "w") as f:
            f.write(comm + "\n")
        with open(os.path.join(proc, str(pid), "cgroup"), "w") as f:
            f.write(f"0::/system.slice/slurmstepd.scope/job_{job}/step_batch/user/task_0\n")
    config = os.path.join(root, "fake-nvml.json")
    with open(os.path.join(SOURCE, "tests", "fake_nvml", "h200.json")) as f:
        fake = json.load(f)
    device = fake["devices"][0]
    fake["devices"] = [device]
    device["power_trace"] = [[0, 300], [1000, 300]]
    device["processes"] = [{"pid": 7001, "sm_util": 60, "end_s": 2.0},
                           {"pid": 7002, "sm_util": 20}]
    with open(config, "w") as f:
        json.dump(fake, f)
    env = dict(os.environ, MIGSCOPE_NVML_LIBRARY=FAKE_NVML, MIGSCOPE_FAKE_NVML_CONFIG=config)
    exporter = cluster.spawn("exporter", [
        MIGSCOPE, "exporter", "--listen", f"127.0.0.1:{exporter_port}", "--interval-s", "0.2",
        "--idle-power-w", "100", "--proc-root", proc, "--pod-resources-socket", ""], env=env)

    def done():
        q = subprocess.run(["squeue", "-h", "-j", f"{job_a},{job_b}"], env=cluster.env,
                           capture_output=True, text=True)
        return q.returncode == 0 and not q.stdout.strip()

    wait_for("the epilog's jobs to end", done, 30, 0.5)
    assert exporter.poll() is None, cluster.tail("exporter.out")
    # slurmdbd stores what the epilog's sacctmgr wrote; sacct reads it back.
    wait_for("both records' AdminComment", lambda: admin_comment(cluster, job_a) and
             admin_comment(cluster, job_b), 10, 0.5)
    comment_a, comment_b = admin_comment(cluster, job_a), admin_comment(cluster, job_b)
    log("AdminComment of job A:", comment_a)
    log("AdminComment of job B:", comment_b)
    m = re.search(r"migscope_energy_j=(\S+) series=1 gpus=0 "
                  r"method=shared_idle_static_process_sm_util_dynamic", comment_a)
    assert m, comment_a + cluster.tail("exporter.out") + cluster.tail("epilog.log")
    recorded_j = float(m.group(1))
    # What the exporter holds for job A now (its process ended at 2 s: the counter is final).
    p = subprocess.run([MIGSCOPE, "energy", "--exporter",
                        f"http://127.0.0.1:{exporter_port}/metrics", "--match",
                        f"slurm_job_id={job_a}", "--format", "json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    now = json.loads(p.stdout)
    assert now["series"] == 1 and now["energy_j"] == recorded_j, (now, recorded_j)
    # 200 W dynamic split 60 : 20 gives 7001 150 W for up to 2 s.
    assert 0.5 * 150 * 2 < recorded_j <= 150 * 2 * 1.01, recorded_j
    assert "migscope_energy_j=none series=0" in comment_b, comment_b


def run_test(root):
    plan_dir = os.path.join(root, "plan")
    jobs_file = os.path.join(root, "jobs.json")
    with open(jobs_file, "w") as f:
        json.dump({"jobs": JOBS}, f)
    args = ["plan", "--jobs-file", jobs_file, *PLAN_ARGS]
    plan = json.loads(subprocess.run([MIGSCOPE, *args, "--format", "json"], check=True,
                                     capture_output=True, text=True).stdout)["recommended"]
    p = subprocess.run([MIGSCOPE, *args, "--format", "slurm", "-o", plan_dir],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    (gpu,) = plan["gpus"]
    assert gpu["partitioned"], f"the case needs MIG partitions: {gpu['layout']}"
    queues = [q for q in gpu["queues"] if q]
    assert any(len(q) > 1 for q in queues), f"the case needs a queue: {queues}"
    # What the plan says: each job's partition, profile and predecessor.
    expected = {}
    for index, (partition, queue) in enumerate(zip(gpu["partitions"], gpu["queues"])):
        for position, name in enumerate(queue):
            expected[name] = {"partition": index, "profile": partition.split("@")[0],
                              "after": queue[position - 1] if position else None}
    assert set(expected) == {j["name"] for j in JOBS}, expected

    # The files: one script per job, nothing smuggled, every script valid shell.
    files = sorted(os.listdir(plan_dir))
    scripts = [f for f in files if f.endswith(".sbatch")]
    assert len(scripts) == len(JOBS), files
    assert set(files) - set(scripts) == {"gres.conf", "gres-explicit.conf", "slurm.conf",
                                         "mig-parted.yaml", "submit.sh"}, files
    assert os.access(os.path.join(plan_dir, "submit.sh"), os.X_OK)
    by_slug = {}
    for name in scripts + ["submit.sh"]:
        path = os.path.join(plan_dir, name)
        p = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
        assert p.returncode == 0, f"{name}: {p.stderr}"
        with open(path) as f:
            text = f.read()
        assert "evil" not in "".join(l for l in text.splitlines(keepends=True)
                                     if not l.startswith("exec ")), name
        if name.endswith(".sbatch"):
            assert text.startswith("#!/bin/bash\n"), name
            by_slug[name[:-len(".sbatch")]] = comment_name(text)
    assert sorted(by_slug.values()) == sorted(expected), by_slug

    cluster = Cluster(root)
    os.makedirs(os.path.join(root, "log"))
    try:
        cluster.start_munge()
        exporter_port = free_port()
        epilog = write_epilog_wrapper(root, exporter_port)
        task_prolog, probe = write_task_prolog_wrapper(root)
        node, gres = cluster.write_config(plan_dir, epilog, task_prolog)
        log("node:", node)
        for line in gres:
            log("gres.conf:", line)
        cluster.start_accounting()
        state = cluster.start_slurm()
        p = subprocess.run(["scontrol", "show", "node"], env=cluster.env, capture_output=True,
                           text=True)
        assert state == "idle", f"node {state}: the plan's GRES lines and gres.conf disagree?\n" \
            + p.stdout + cluster.tail("slurmd.log") + cluster.tail("slurmctld.log")

        # Submit every script through submit.sh, with the stand-in migscope first on PATH.
        bin_dir, records = os.path.join(root, "bin"), os.path.join(root, "records")
        os.makedirs(bin_dir)
        os.makedirs(records)
        with open(os.path.join(bin_dir, "migscope"), "w") as f:
            f.write(STUB)
        os.chmod(os.path.join(bin_dir, "migscope"), 0o755)
        marks = os.path.join(root, "marks")
        os.makedirs(marks)
        env = dict(cluster.env, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                   RECORD_DIR=records, JOB_SECONDS=str(JOB_SECONDS),
                   MARK=os.path.join(marks, "MARK"))
        submitted = time.time()
        p = subprocess.run([os.path.join(plan_dir, "submit.sh"), "--partition=test"], env=env,
                           cwd=marks, capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stdout + p.stderr
        ids = dict(line.split() for line in p.stdout.splitlines())
        assert set(ids) == set(by_slug), (ids, by_slug)
        log(f"submitted {len(ids)} jobs in {time.time() - submitted:.1f} s")

        def all_done():
            q = subprocess.run(["squeue", "-h", "-o", "%i %T", "-j", ",".join(ids.values())],
                               env=cluster.env, capture_output=True, text=True)
            return q.returncode == 0 and not q.stdout.strip()

        longest = max(len(q) for q in queues)
        wait_for("the jobs to end", all_done, 20 + longest * (JOB_SECONDS + 5), 0.5)

        runs = {}
        for slug, job_id in ids.items():
            name = by_slug[slug]
            show = subprocess.run(["scontrol", "show", "job", job_id], env=cluster.env,
                                  capture_output=True, text=True).stdout
            assert "JobState=COMPLETED" in show and "ExitCode=0:0" in show, \
                f"{slug} ({job_id}):\n{show}" + job_output(plan_dir, job_id)
            base = os.path.join(records, job_id)
            with open(base + ".start") as f:
                start = float(f.read())
            with open(base + ".end") as f:
                end = float(f.read())
            with open(base + ".argv", "rb") as f:
                argv = f.read().decode().split("\0")[:-1]
            with open(base + ".job") as f:
                detail = f.read()
            m = re.search(r"GRES=gpu:([^:\s]+):1\(IDX:(\d+)\)", detail)
            assert m, f"{slug}: no GRES in\n{detail}"
            runs[name] = {"start": start, "end": end, "argv": argv, "type": m.group(1),
                          "idx": int(m.group(2)), "slug": slug}
            log(f"{slug}: {m.group(1)} device {m.group(2)}, "
                f"{start - submitted:.1f}-{end - submitted:.1f} s")

        for name, want in expected.items():
            run = runs[name]
            # On a device of its planned profile's type (Slurm's NVML name for the H200).
            assert run["type"] == "nvidia_h200_" + want["profile"], (name, run, want)
            # After the job before it in its queue.
            if want["after"]:
                before = runs[want["after"]]
                assert run["start"] >= before["end"], (name, run, want["after"], before)
        # The first job of each partition ran side by side with the others.
        firsts = [runs[q[0]] for q in queues]
        assert max(r["start"] for r in firsts) < min(r["end"] for r in firsts), firsts
        # No two jobs on one device at once.
        for a in runs.values():
            for b in runs.values():
                if a is not b and a["idx"] == b["idx"]:
                    assert a["end"] <= b["start"] or b["end"] <= a["start"], (a, b)
        # The hostile argument arrived whole, and nothing it or the name held ran.
        argv = runs[HOSTILE_NAME]["argv"]
        assert argv[argv.index("--data") + 1] == HOSTILE_DATA, argv
        assert os.listdir(marks) == [], os.listdir(marks)
        for root_dir, _, names in os.walk(root):
            for n in names:
                assert not n.startswith("MARK"), os.path.join(root_dir, n)
        log(f"{len(runs)} jobs ran as planned on {gpu['layout']}")
        # With no exporter to ask, the epilog recorded nothing and failed no job (above).
        for job_id in ids.values():
            assert admin_comment(cluster, job_id) == "", job_id
        check_energy_epilog(cluster, root, exporter_port)
        check_activity_task_prolog(cluster, root, probe)
    except Exception:
        for name in ("munged.out", "mariadbd.out", "slurmdbd.out", "slurmdbd.log",
                     "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log", "epilog.log",
                     "exporter.out"):
            print(cluster.tail(name, 40), file=sys.stderr)
        raise
    finally:
        signal.alarm(0)
        cluster.stop()


class Deadline(Exception):
    pass


def on_signal(signum, _frame):
    # An exception, so that the finally blocks stop the daemons.
    raise Deadline(f"signal {signum}" if signum != signal.SIGALRM else
                   f"still running after {DEADLINE_S} s")


def main():
    global MIGSCOPE, SOURCE, FAKE_NVML
    MIGSCOPE, SOURCE, FAKE_NVML = (os.path.abspath(a) for a in sys.argv[1:4])
    started = time.monotonic()
    for signum in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, on_signal)
    signal.alarm(DEADLINE_S)
    try:
        if os.geteuid() != 0:
            raise Skip("needs root to start slurmd and munged (CI runs as root)")
        missing = [t for t in ("munged", "slurmctld", "slurmd", "slurmdbd", "sbatch", "squeue",
                               "scontrol", "sinfo", "scancel", "sacct", "sacctmgr", "mariadbd",
                               "mariadb-install-db", "mariadb") if not shutil.which(t)]
        if missing:
            raise Skip("missing " + ", ".join(missing) + " (Debian: apt-get install "
                       "--no-install-recommends slurm-wlm slurmdbd mariadb-server munge)")
        root = tempfile.mkdtemp(prefix="migscope-slurm-")
        os.chmod(root, 0o755)  # munged checks every folder above its socket
        try:
            run_test(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    except Skip as e:
        log("SKIPPED:", e)
        return SKIP
    log(f"passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
