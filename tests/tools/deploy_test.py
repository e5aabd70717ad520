#!/usr/bin/env python3
"""`migscope plan --format k8s|slurm` and deploy/: real properties of the output, then kubectl and
the Kubernetes JSON schemas (kubernetes-validate) over every manifest.

Usage: deploy_test.py MIGSCOPE_BINARY SOURCE_DIR. kubectl and kubernetes-validate are found on
PATH and in $MIGSCOPE_KUBERNETES_VALIDATE (a pip --target folder); `./build.sh test` installs both
(scripts/install-deps.sh), and a check skips with a message only when its tool is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import yaml
except ImportError:  # PyYAML comes with kubernetes-validate too
    sys.path.append(os.environ.get("MIGSCOPE_KUBERNETES_VALIDATE", ""))
    import yaml

MIGSCOPE = SOURCE = None
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# The exporter's metrics (docs/exporter.md): the dashboard may query these only.
METRICS = {
    "migscope_gpu_up", "migscope_gpu_power_watts", "migscope_gpu_energy_joules_total",
    "migscope_energy_joules_total", "migscope_sm_activity_ratio", "migscope_attribution_info",
}
HOSTILE = ["../x", 'A B"', "x: {y: 1}\n", "-- --", "Ünïcode+name/../etc", "a" * 120, "#", "job#2"]
MIX = "resnet18:32,resnet18:32,resnet50:32,bert-base:train:4,resnet18:32,vit-b16,resnet50:32"


def run(*args, check=True):
    p = subprocess.run([MIGSCOPE, *args], capture_output=True, text=True, cwd=SOURCE)
    if check and p.returncode != 0:
        raise AssertionError(f"migscope {' '.join(args)}: exit {p.returncode}\n{p.stderr}")
    return p


# NVIDIA's default mig-parted config (a copy: tests/mig/nvidia-config-default.yaml).
def nvidia_default_config():
    with open(os.path.join(SOURCE, "tests", "mig", "nvidia-config-default.yaml")) as f:
        return yaml.safe_load(f)["mig-configs"]


def hostile_jobs_file(folder):
    """Built-in jobs under names that are unsafe as Kubernetes names, YAML and shell."""
    workloads = ["resnet18", "resnet50", "resnet18", "bert-base", "resnet18", "vit-b16",
                 "resnet50", "resnet18"]
    jobs = []
    for name, workload in zip(HOSTILE, workloads):
        job = {"workload": workload, "name": name.replace("\n", "")}
        if workload.startswith("resnet"):
            job["batch"] = 32
        if workload == "bert-base":
            job["batch"] = 4
        jobs.append(job)
    path = os.path.join(folder, "hostile.json")
    with open(path, "w") as f:
        json.dump({"jobs": jobs}, f)
    return path, [j["name"] for j in jobs]


def profile_of(resources):
    (name, count), = resources["limits"].items()
    assert count == 1, resources
    if name == "nvidia.com/gpu":
        return None
    assert name.startswith("nvidia.com/mig-"), name
    return name[len("nvidia.com/mig-"):]


def layout_counts(layout):
    """'4g.71gb@0+3g.71gb@4' -> {'4g.71gb': 1, '3g.71gb': 1}; the whole GPU -> {}."""
    counts = {}
    if layout.startswith("whole GPU"):
        return counts
    for term in layout.split("+"):
        profile = term.split("@")[0]
        counts[profile] = counts.get(profile, 0) + 1
    return counts


class Kubernetes(unittest.TestCase):
    def check_plan(self, plan_args, names=None, own=None):
        """The k8s stream against the same plan as JSON: one Job per planned job, on its profile."""
        plan = json.loads(run("plan", *plan_args, "--format", "json").stdout)["recommended"]
        text = run("plan", *plan_args, "--format", "k8s", "--image", "registry.example/ml:1").stdout
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
        configmaps = [d for d in docs if d["kind"] == "ConfigMap"]
        jobs = [d for d in docs if d["kind"] == "Job"]
        self.assertEqual(len(configmaps), 1)
        self.assertEqual(len(docs), 1 + len(jobs))
        self.assertEqual(len(jobs), len(plan["jobs"]), "one Job per planned job")

        parted = yaml.safe_load(configmaps[0]["data"]["config.yaml"])
        # migscope's strict mig-parted reader: every config is a layout an H200 holds.
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(configmaps[0]["data"]["config.yaml"])
            f.flush()
            checked = run("layouts", "--gpu", "h200", "--mig-parted", f.name).stdout
        # NVIDIA's defaults for other boards are "for other GPUs"; nothing is invalid.
        self.assertRegex(checked, r" 0 invalid, ")
        self.assertEqual(parted["version"], "v1")
        configs = parted["mig-configs"]
        labels = set(re.findall(r"nvidia\.com/mig\.config=(\S+)", text))
        # The ConfigMap's configs are the node labels and NVIDIA's defaults, kept for the nodes
        # labelled with one of those (all-disabled: the operator's default label).
        self.assertLessEqual(labels, set(configs))
        for name in set(configs) - labels:
            self.assertTrue(name.startswith("all-"), name)
        self.assertLessEqual(set(nvidia_default_config()), set(configs))
        self.assertEqual(configs["all-disabled"], [{"devices": "all", "mig-enabled": False}])
        for name in labels:
            self.assertRegex(name, LABEL_VALUE)
            self.assertLessEqual(len(name), 63)
            self.assertNotIn("+", name)

        by_name = {j["job"]: j for j in plan["jobs"]}
        self.assertEqual(len(by_name), len(plan["jobs"]))
        seen_names, running = set(), {}
        for job in jobs:
            meta, spec = job["metadata"], job["spec"]
            pod = spec["template"]["spec"]
            self.assertRegex(meta["name"], DNS_LABEL)
            self.assertLessEqual(len(meta["name"]), 63)
            self.assertNotIn(meta["name"], seen_names)
            seen_names.add(meta["name"])
            original = meta["annotations"]["migscope/job-name"]
            planned = by_name.pop(original)  # the original name is kept, and names a planned job
            gpu = int(meta["annotations"]["migscope/gpu"])
            self.assertEqual(gpu, planned["gpu"])
            config = pod["nodeSelector"]["nvidia.com/mig.config"]
            self.assertIn(config, configs)
            self.assertEqual(meta["labels"]["nvidia.com/mig.config"], config)
            (container,) = pod["containers"]
            profile = profile_of(container["resources"])
            layout = layout_counts(plan["gpus"][gpu]["layout"])
            entry, = configs[config]
            if profile is None:
                self.assertEqual(planned["partition"], "whole GPU")
                self.assertFalse(entry["mig-enabled"])
            else:
                # The profile the plan gave it, one its GPU's layout and its node's config have.
                self.assertEqual(planned["partition"].split(" ")[0], profile)
                self.assertIn(profile, layout)
                self.assertTrue(entry["mig-enabled"])
                self.assertEqual(entry["mig-devices"], layout)
            if not spec.get("suspend", False):
                key = (gpu, profile)
                running[key] = running.get(key, 0) + 1
                self.assertLessEqual(running[key], layout.get(profile, 1) if profile else 1,
                                     f"more Jobs start at once on GPU {gpu} than it has {profile}")
            else:
                self.assertIn(meta["annotations"]["migscope/after"], seen_names,
                              "a queued Job names the Job before it")
            if own is not None:
                self.assertEqual(container["command"], own[original])
            else:
                self.assertEqual(container["command"][:2], ["migscope", "train"])
            self.assertEqual(container["image"], "registry.example/ml:1")
        self.assertEqual(by_name, {}, "every planned job has its Job")
        if names is not None:
            self.assertEqual({j["metadata"]["annotations"]["migscope/job-name"] for j in jobs},
                             set(names))
        return text, plan

    def test_mix_on_two_gpus(self):
        for objective in ("throughput", "makespan", "energy"):
            with self.subTest(objective=objective):
                self.check_plan(["--jobs", MIX, "--work", "2000", "--gpus", "2",
                                 "--objective", objective])

    def test_partitions_and_queues(self):
        # The best predicted plan, whatever the model's error says of its gain (what is deployed
        # is the recommendation; the decision has tests of its own).
        text, plan = self.check_plan(["--jobs", MIX, "--work", "2000", "--gpus", "2",
                                      "--objective", "makespan", "--model-error", "none"])
        self.assertTrue(any(g["partitioned"] for g in plan["gpus"]), "the case partitions")
        self.assertIn("suspend: true", text, "the case has queued jobs")

    def test_hostile_names(self):
        with tempfile.TemporaryDirectory() as folder:
            path, names = hostile_jobs_file(folder)
            for objective in ("throughput", "makespan"):
                text, _ = self.check_plan(["--jobs-file", path, "--work", "1000", "--gpus", "2",
                                           "--objective", objective], names=names)
                self.assertNotIn("\ny: 1", text)

    def test_own_jobs_keep_their_commands(self):
        jobs_file = os.path.join(SOURCE, "examples", "own-job", "jobs.json")
        with open(jobs_file) as f:
            own = {j["name"]: j["command"] for j in json.load(f)["jobs"]}
        self.check_plan(["--jobs-file", jobs_file, "--work", "1",
                         "--profiles", os.path.join(SOURCE, "data", "profiles-h200-own-jobs.json"),
                         "--objective", "throughput"], own=own)

    def test_builtin_jobs_keep_data_checkpoint_and_lora_rank(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "jobs.json")
            with open(path, "w") as f:
                json.dump({"jobs": [
                    {"workload": "resnet18", "batch": 32, "name": "data", "data": "/d/x y.bin"},
                    {"workload": "gpt2-medium", "name": "tuned", "lora_rank": 16,
                     "checkpoint": "/c/'q'.safetensors"}]}, f)
            args = ["plan", "--jobs-file", path, "--work", "100", "--objective", "throughput"]
            text = run(*args, "--format", "k8s", "--image", "i").stdout
            commands = {d["metadata"]["annotations"]["migscope/job-name"]:
                        d["spec"]["template"]["spec"]["containers"][0]["command"]
                        for d in yaml.safe_load_all(text) if d and d["kind"] == "Job"}
            self.assertIn(["--data", "/d/x y.bin"],
                          [commands["data"][i:i + 2] for i in range(len(commands["data"]))])
            tuned = commands["tuned"]
            self.assertEqual(tuned[tuned.index("--checkpoint") + 1], "/c/'q'.safetensors")
            self.assertEqual(tuned[tuned.index("--lora-rank") + 1], "16")
            self.assertEqual(tuned[tuned.index("--steps") + 1], "100")
            # The same argv through the sbatch script's shell quoting.
            parts = slurm_files(args[1:], folder)
            argvs = [exec_argv(body) for name, body in parts.items() if name.endswith(".sbatch")]
            self.assertCountEqual(argvs, list(commands.values()))

    def test_hostile_argument_stays_in_its_document(self):
        """The k8s form is one YAML stream: an argument holding a document separator, a
        manifest and a section header stays one string of its Job's command."""
        hostile = ("/d/x\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n...\n"
                   "#### migscope: evil.sbatch\n$(touch MARK)'\"\t\x1b[2J")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "jobs.json")
            with open(path, "w") as f:
                json.dump({"jobs": [
                    {"workload": "resnet18", "batch": 32, "name": "a", "data": hostile},
                    {"workload": "resnet50", "batch": 32, "name": "b", "checkpoint": hostile}]},
                    f)
            text = run("plan", "--jobs-file", path, "--work", "10", "--objective", "throughput",
                       "--format", "k8s", "--image", "registry.example/ml:1").stdout
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
        self.assertEqual(sorted(d["kind"] for d in docs), ["ConfigMap", "Job", "Job"])
        self.assertNotRegex(text, r"(?m)^---\n(apiVersion: v1\n)?kind: Pod")
        commands = [d["spec"]["template"]["spec"]["containers"][0]["command"]
                    for d in docs if d["kind"] == "Job"]
        self.assertEqual(sorted(c[c.index(o) + 1] for c in commands
                                for o in ("--data", "--checkpoint") if o in c),
                         [hostile, hostile])

    def test_text_that_is_not_utf8_or_holds_nul_is_refused(self):
        """--image and the namespace from argv, arguments and names from a jobs file: exit 2
        naming the option or field, nothing written."""
        not_utf8 = "ml\udcff"  # the byte 0xff in argv (Python's surrogate escape)
        base = ["plan", "--jobs", MIX, "--work", "2000", "--format", "k8s"]
        for args, field in ((["--image", not_utf8], "--image"),
                            (["--image", "i", "--namespace", not_utf8], "--namespace")):
            p = run(*base, *args, check=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(field + ": is not UTF-8 (byte 0xff at offset 2)", p.stderr)
            self.assertEqual(p.stdout, "")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "jobs.json")
            for job, field in (({"command": ["python3", "a\0b"], "name": "own"},
                                "jobs[0].command[1]"),
                               ({"workload": "resnet18", "name": "x\0"}, "jobs[0].name"),
                               ({"workload": "resnet18", "data": "/d\0/x"}, "jobs[0].data")):
                with open(path, "w") as f:
                    json.dump({"jobs": [job]}, f)
                for fmt, extra in (("k8s", ["--image", "i"]),
                                   ("slurm", ["-o", os.path.join(folder, "out")])):
                    p = run("plan", "--jobs-file", path, "--work", "10", "--format", fmt, *extra,
                            check=False)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertIn(f"{path}: {field}: holds a NUL byte", p.stderr)
                    self.assertEqual(p.stdout, "")
                    self.assertFalse(os.path.exists(os.path.join(folder, "out")))

    def test_nvidia_defaults_match_nvidias_file(self):
        """The defaults the ConfigMap keeps hold what NVIDIA's file holds, board by board: every
        config, and every board its device-filters name."""
        text = run("plan", "--jobs", MIX, "--work", "2000", "--format", "k8s", "--image",
                   "i").stdout
        (cm,) = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "ConfigMap"]
        ours = yaml.safe_load(cm["data"]["config.yaml"])["mig-configs"]
        for name, entries in nvidia_default_config().items():
            for entry in entries:
                with self.subTest(config=name, filter=entry.get("device-filter")):
                    ids = entry.get("device-filter", [])
                    ids = [ids] if isinstance(ids, str) else ids
                    mine = [e for e in ours[name]
                            if not ids or not e.get("device-filter")
                            or set(ids) & set(e["device-filter"])]
                    self.assertTrue(mine, f"{name}: no entry for {ids}")
                    if ids and mine[0].get("device-filter"):
                        self.assertLessEqual(set(ids), set(mine[0]["device-filter"]), name)
                    self.assertEqual(mine[0]["mig-enabled"], entry["mig-enabled"])
                    self.assertEqual(mine[0].get("mig-devices", {}), entry.get("mig-devices", {}))

    def test_base_config_is_merged_into(self):
        """--k8s-base-config: the user's ConfigMap (its name, namespace and configs) with the
        plan's configs added; a name the plan writes too is refused, naming it."""
        args = ["plan", "--jobs", MIX, "--work", "2000", "--gpus", "2", "--objective",
                "makespan", "--model-error", "none", "--format", "k8s", "--image", "i"]
        labels = set(re.findall(r"nvidia\.com/mig\.config=(\S+)", run(*args).stdout))
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "base.yaml")
            hostile = 'x: {y: 1} # --- "q"'
            parted = {"version": "v1", "mig-configs": {
                "all-disabled": [{"devices": "all", "mig-enabled": False}],
                "site-custom": [{"devices": [0, 1], "mig-enabled": True,
                                 "mig-devices": {"3g.71gb": 2}}],
                hostile: [{"devices": "all", "mig-enabled": False}]}}
            cm = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "site-mig-config", "namespace": "gpu-ops"},
                  "data": {"config.yaml": yaml.safe_dump(parted)}}
            with open(base, "w") as f:
                yaml.safe_dump(cm, f)
            text = run(*args, "--k8s-base-config", base).stdout
            (out,) = [x for x in yaml.safe_load_all(text) if x and x["kind"] == "ConfigMap"]
            self.assertEqual(out["metadata"]["name"], "site-mig-config")
            self.assertEqual(out["metadata"]["namespace"], "gpu-ops")
            configs = yaml.safe_load(out["data"]["config.yaml"])["mig-configs"]
            self.assertEqual(set(configs), labels | set(parted["mig-configs"]))
            self.assertEqual(configs["site-custom"], parted["mig-configs"]["site-custom"])
            self.assertEqual(configs[hostile], [{"devices": "all", "mig-enabled": False}])
            self.assertNotIn("all-balanced", configs, "their ConfigMap, not NVIDIA's defaults")
            merged = os.path.join(d, "merged.yaml")
            with open(merged, "w") as f:
                f.write(out["data"]["config.yaml"])
            run("layouts", "--gpu", "h200", "--mig-parted", merged)
            # A bare mig-parted file works too (the default ConfigMap name then).
            bare = os.path.join(d, "bare.yaml")
            with open(bare, "w") as f:
                yaml.safe_dump(parted, f)
            text = run(*args, "--k8s-base-config", bare).stdout
            self.assertIn("name: migscope-mig-parted-config", text)
            # A clash: the base already has one of the plan's names.
            clash = next(n for n in sorted(labels) if n != "all-disabled")  # the case partitions
            parted["mig-configs"][clash] = [{"devices": "all", "mig-enabled": False}]
            with open(bare, "w") as f:
                yaml.safe_dump(parted, f)
            p = run(*args, "--k8s-base-config", bare, check=False)
            self.assertEqual(p.returncode, 2)
            self.assertIn(f"'{clash}'", p.stderr)
            self.assertEqual(p.stdout, "")
            # Only --format k8s has a ConfigMap.
            p = run("plan", "--jobs", MIX, "--work", "2000", "--k8s-base-config", bare,
                    check=False)
            self.assertEqual(p.returncode, 2)
            self.assertIn("--k8s-base-config", p.stderr)

    def test_refusals(self):
        p = run("plan", "--jobs", MIX, "--work", "2000", "--format", "k8s", check=False)
        self.assertEqual(p.returncode, 2, "an input error")
        self.assertIn("--image", p.stderr)
        self.assertEqual(p.stdout, "")
        for fmt in ("k8s", "slurm"):
            for backend in ("green", "mps"):
                p = run("plan", "--jobs", MIX, "--work", "2000", "--format", fmt, "--image", "i",
                        "--backend", backend, check=False)
                self.assertEqual(p.returncode, 2)
                self.assertIn("--backend mig", p.stderr)
        p = run("plan", "--jobs", MIX, "--work", "2000", "--format", "k8s", "--image", "i",
                "--namespace", "Bad Namespace", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--namespace", p.stderr)
        # A refusal leaves no -o file behind (not even an empty one).
        with tempfile.TemporaryDirectory() as d:
            target = os.path.join(d, "plan.yaml")
            p = run("plan", "--jobs", MIX, "--work", "2000", "--format", "k8s", "-o", target,
                    check=False)
            self.assertEqual(p.returncode, 2)
            self.assertFalse(os.path.exists(target))


def slurm_files(plan_args, folder, *extra):
    """The files `plan --format slurm -o DIR` writes, by name."""
    out_dir = tempfile.mkdtemp(dir=folder)
    run("plan", *plan_args, "--format", "slurm", "-o", out_dir, *extra)
    out = {}
    for name in os.listdir(out_dir):
        with open(os.path.join(out_dir, name)) as f:
            out[name] = f.read()
    return out


def exec_argv(script):
    """The argv of a script's `exec` line, as bash reads it."""
    (line,) = [l for l in script.splitlines() if l.startswith("exec ")]
    return subprocess.run(["bash", "-c", 'printf "%s\\0" ' + line[len("exec "):]],
                          capture_output=True, text=True).stdout.split("\0")[:-1]


class Slurm(unittest.TestCase):
    def check_plan(self, plan_args, *extra, prefix="nvidia_h200_"):
        plan = json.loads(run("plan", *plan_args, "--format", "json").stdout)["recommended"]
        with tempfile.TemporaryDirectory() as folder:
            parts = slurm_files(plan_args, folder, *extra)
        self.assertIn("AutoDetect=nvml", parts["gres.conf"].splitlines())
        slurm_conf = parts["slurm.conf"]
        self.assertIn("GresTypes=gpu", slurm_conf.splitlines())
        lines = [l for l in slurm_conf.splitlines() if l.startswith("NodeName=")]
        layouts, by_node = [], {}
        features = set()
        for line in lines:
            counts = {}
            node = line.split()[0]
            features.add(re.search(r" Feature=(\S+) ", line).group(1))
            for item in line.split(" Gres=")[1].split(","):
                fields = item.split(":")
                self.assertEqual(fields[0], "gpu")
                if len(fields) == 3:
                    # The MIG types as slurmd's NVML autodetection names them.
                    self.assertTrue(fields[1].startswith(prefix), fields[1])
                    counts[fields[1][len(prefix):]] = int(fields[2])
            layouts.append(counts)
            by_node[node] = counts
        for g in plan["gpus"]:
            self.assertIn(layout_counts(g["layout"]), layouts)
        # gres-explicit.conf: the same devices, each with its files.
        explicit = {}
        for line in parts["gres-explicit.conf"].splitlines():
            if line.startswith("#"):
                continue
            node = line.split()[0]
            self.assertIn(node, by_node)
            if " Type=" in line:
                self.assertRegex(line, r" MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/\S+,"
                                       r"/dev/nvidia-caps/\S+$")
                profile = re.search(r" Type=(\S+) ", line).group(1)[len(prefix):]
                explicit.setdefault(node, {}).setdefault(profile, 0)
                explicit[node][profile] += 1
            else:
                self.assertTrue(line.endswith(" Name=gpu File=/dev/nvidia0"), line)
                explicit.setdefault(node, {})
        self.assertEqual(explicit, by_node)
        yaml.safe_load(parts["mig-parted.yaml"])
        scripts = {k: v for k, v in parts.items() if k.endswith(".sbatch")}
        self.assertEqual(len(scripts), len(plan["jobs"]))
        self.assertEqual(set(parts) - set(scripts), {"gres.conf", "gres-explicit.conf",
                                                     "slurm.conf", "mig-parted.yaml",
                                                     "submit.sh"})
        for name, body in scripts.items():
            self.assertRegex(name[:-len(".sbatch")], DNS_LABEL)
            self.assertTrue(body.startswith("#!/bin/bash\n"))
            self.assertIn(re.findall(r"^#SBATCH --constraint=(\S+)$", body, re.M)[0], features)
            gres = re.findall(r"^#SBATCH --gres=(\S+)$", body, re.M)
            self.assertEqual(len(gres), 1)
            fields = gres[0].split(":")
            if len(fields) == 3:
                self.assertEqual(fields[2], "1")
                self.assertTrue(any(fields[1][len(prefix):] in c for c in layouts))
            else:
                self.assertEqual(gres[0], "gpu:1")
            # The script is valid shell (bash -n) and runs one command.
            p = subprocess.run(["bash", "-n"], input=body, text=True, capture_output=True)
            self.assertEqual(p.returncode, 0, p.stderr)
        submit = parts["submit.sh"]
        self.assertEqual(submit.count("sbatch --parsable"), len(scripts))
        for name in scripts:
            self.assertIn(f" {name})\n", submit)
        p = subprocess.run(["bash", "-n"], input=submit, text=True, capture_output=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return parts

    def test_mix_on_two_gpus(self):
        for objective in ("throughput", "makespan"):
            with self.subTest(objective=objective):
                self.check_plan(["--jobs", MIX, "--work", "2000", "--gpus", "2",
                                 "--objective", objective])

    def test_gres_type_naming(self):
        args = ["--jobs", MIX, "--work", "2000", "--gpus", "2", "--objective", "makespan"]
        self.check_plan(args, "--slurm-gres-type", "site_{profile}", prefix="site_")
        self.check_plan(args, "--slurm-gres-type", "nvidia_h200_nvl_{profile}",
                        prefix="nvidia_h200_nvl_")

    def test_hostile_names_stay_arguments(self):
        with tempfile.TemporaryDirectory() as folder:
            path, _ = hostile_jobs_file(folder)
            parts = self.check_plan(["--jobs-file", path, "--work", "1000", "--gpus", "2",
                                     "--objective", "throughput"])
            for name, body in parts.items():
                if name.endswith(".sbatch"):
                    self.assertEqual(len([l for l in body.splitlines()
                                          if not l.startswith("#")]), 1, body)

    def test_hostile_argument_stays_one_argument(self):
        """An argument that holds a section header, a script and command substitutions: each
        script is valid shell, runs its command with the argument whole, and runs nothing else."""
        hostile = ("/d/x\n#### migscope: evil.sbatch\n#!/bin/bash\ntouch \"$MARK\"\n"
                   "$(touch MARK2)`touch MARK3`'; touch MARK4; '\n")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "jobs.json")
            with open(path, "w") as f:
                json.dump({"jobs": [
                    {"workload": "resnet18", "batch": 32, "name": "a$(touch MARK5)'",
                     "data": hostile},
                    {"workload": "resnet50", "batch": 32, "name": "b", "checkpoint": hostile}]},
                    f)
            parts = self.check_plan(["--jobs-file", path, "--work", "10",
                                     "--objective", "throughput"])
            self.assertNotIn("evil.sbatch", parts)
            bin_dir, marks = os.path.join(folder, "bin"), os.path.join(folder, "marks")
            os.makedirs(bin_dir)
            os.makedirs(marks)
            stub = os.path.join(bin_dir, "migscope")
            with open(stub, "w") as f:
                f.write('#!/bin/bash\nprintf "%s\\0" "$@" > "$ARGV_FILE"\n')
            os.chmod(stub, 0o755)
            argvs = []
            for name, body in sorted(parts.items()):
                if not name.endswith(".sbatch"):
                    continue
                self.assertNotIn("evil", "".join(l for l in body.splitlines(keepends=True)
                                                 if not l.startswith("exec ")))
                argv_file = os.path.join(folder, name + ".argv")
                env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                           MARK=os.path.join(marks, "MARK"), ARGV_FILE=argv_file)
                p = subprocess.run(["bash", "-c", body], env=env, cwd=marks,
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                with open(argv_file) as f:
                    argvs.append(f.read().split("\0")[:-1])
                self.assertEqual(exec_argv(body)[1:], argvs[-1])
            self.assertEqual(os.listdir(marks), [], "nothing but the command ran")
            self.assertEqual(sorted(a[a.index(opt) + 1] for a in argvs
                                    for opt in ("--data", "--checkpoint") if opt in a),
                             [hostile, hostile])

    def test_own_job_commands_round_trip_through_the_shell(self):
        jobs_file = os.path.join(SOURCE, "examples", "own-job", "jobs.json")
        parts = self.check_plan(["--jobs-file", jobs_file, "--work", "1", "--profiles",
                                 os.path.join(SOURCE, "data", "profiles-h200-own-jobs.json"),
                                 "--objective", "throughput"])
        with open(jobs_file) as f:
            commands = [j["command"] for j in json.load(f)["jobs"]]
        for body in (v for k, v in parts.items() if k.endswith(".sbatch")):
            self.assertIn(exec_argv(body), commands)

    def test_refusals(self):
        with tempfile.TemporaryDirectory() as folder:
            # One file per script: no single stream to split.
            p = run("plan", "--jobs", MIX, "--work", "2000", "--format", "slurm", check=False)
            self.assertEqual(p.returncode, 2)
            self.assertIn("-o DIR", p.stderr)
            self.assertEqual(p.stdout, "")
            # A naming that is no GRES type, or gives two sizes one type: no folder made.
            for naming in ("{profile}:x", "{nope}", "mig", "a\n{profile}"):
                target = os.path.join(folder, "out")
                p = run("plan", "--jobs", MIX, "--work", "2000", "--objective", "makespan",
                        "--format", "slurm", "-o", target, "--slurm-gres-type", naming,
                        check=False)
                self.assertEqual(p.returncode, 2, naming)
                self.assertIn("--slurm-gres-type", p.stderr)
                self.assertFalse(os.path.exists(target))


def manifests():
    """deploy/'s manifests and a k8s plan, as files."""
    folder = tempfile.mkdtemp()
    files = sorted(os.path.join(SOURCE, "deploy", f) for f in os.listdir(
        os.path.join(SOURCE, "deploy")) if f.endswith(".yaml"))
    path, _ = hostile_jobs_file(folder)
    for i, args in enumerate([["--jobs", MIX, "--work", "2000", "--gpus", "2", "--objective",
                               "makespan"],
                              ["--jobs-file", path, "--work", "1000", "--gpus", "2",
                               "--objective", "throughput"]]):
        out = os.path.join(folder, f"plan-{i}.yaml")
        run("plan", *args, "--format", "k8s", "--image", "registry.example/ml:1", "-o", out)
        files.append(out)
    # Merged into a user's ConfigMap whose config names need quoting.
    base = os.path.join(folder, "base-configmap.yaml")
    parted = {"version": "v1", "mig-configs": {
        "all-disabled": [{"devices": "all", "mig-enabled": False}],
        'x: {y: 1} # --- "q"': [{"devices": "all", "mig-enabled": True,
                                  "mig-devices": {"1g.18gb": 7}}]}}
    with open(base, "w") as f:
        yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "site-mig-config", "namespace": "gpu-operator"},
                        "data": {"config.yaml": yaml.safe_dump(parted)}}, f)
    out = os.path.join(folder, "plan-merged.yaml")
    run("plan", "--jobs", MIX, "--work", "2000", "--format", "k8s", "--image",
        "registry.example/ml:1", "--k8s-base-config", base, "-o", out)
    files.append(out)
    return folder, files


class Deploy(unittest.TestCase):
    def setUp(self):
        self.folder, self.files = manifests()

    def tearDown(self):
        shutil.rmtree(self.folder)

    def test_daemonset_least_privilege(self):
        with open(os.path.join(SOURCE, "deploy", "exporter-daemonset.yaml")) as f:
            (ds,) = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "DaemonSet"]
        pod = ds["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        sc = c["securityContext"]
        self.assertFalse(sc.get("privileged", False))
        self.assertFalse(sc["allowPrivilegeEscalation"])
        self.assertTrue(sc["readOnlyRootFilesystem"])
        self.assertEqual(sc["capabilities"]["drop"], ["ALL"])
        self.assertNotIn("add", sc["capabilities"])
        self.assertIn("--listen", c["args"])
        self.assertIn("0.0.0.0:9401", c["args"])
        self.assertEqual(c["ports"][0]["containerPort"], 9401)
        # The Hostname label is the node's name, from the downward API.
        self.assertEqual(c["args"][c["args"].index("--hostname") + 1], "$(NODE_NAME)")
        (node_name,) = [e for e in c["env"] if e["name"] == "NODE_NAME"]
        self.assertEqual(node_name["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName")
        # Two host paths and no other: the kubelet's pod-resources directory, read-only, where
        # --pod-resources-socket looks; and the activity socket's folder, written (the exporter
        # binds its socket there).
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(set(mounts), {"pod-resources", "activity"})
        self.assertEqual(set(volumes), set(mounts))
        self.assertTrue(mounts["pod-resources"]["readOnly"])
        self.assertFalse(mounts["activity"].get("readOnly", False))
        self.assertEqual(volumes["pod-resources"]["hostPath"]["path"],
                         "/var/lib/kubelet/pod-resources")
        socket = c["args"][c["args"].index("--pod-resources-socket") + 1]
        self.assertEqual(os.path.dirname(socket), mounts["pod-resources"]["mountPath"])
        activity = c["args"][c["args"].index("--activity-socket") + 1]
        self.assertEqual(os.path.dirname(activity), mounts["activity"]["mountPath"])
        self.assertEqual(volumes["activity"]["hostPath"]["path"], mounts["activity"]["mountPath"])
        # Root for the socket's owner check, but no capability and no escalation.
        self.assertEqual(pod["securityContext"]["runAsUser"], 0)
        self.assertNotEqual(pod["securityContext"].get("runAsGroup", 0), 0)

    def test_activity_probe_job_reaches_the_exporters_socket(self):
        """The example Job loads the probe from a volume its init container fills, and sends to
        the socket the DaemonSet's exporter binds, through the same host folder."""
        with open(os.path.join(SOURCE, "deploy", "exporter-daemonset.yaml")) as f:
            (ds,) = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "DaemonSet"]
        (exporter,) = ds["spec"]["template"]["spec"]["containers"]
        socket = exporter["args"][exporter["args"].index("--activity-socket") + 1]
        with open(os.path.join(SOURCE, "deploy", "activity-probe-job.yaml")) as f:
            (job,) = [d for d in yaml.safe_load_all(f) if d]
        pod = job["spec"]["template"]["spec"]
        (train,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in train["env"]}
        self.assertEqual(env["MIGSCOPE_ACTIVITY_SOCKET"], socket)
        # The job its probe names (for --profiles) comes from the pod's own annotation, and is
        # one the probe takes: 1-128 letters, digits and . _ : + -.
        (job_env,) = [e for e in train["env"] if e["name"] == "MIGSCOPE_JOB"]
        key = re.fullmatch(r"metadata\.annotations\['(.+)'\]",
                           job_env["valueFrom"]["fieldRef"]["fieldPath"]).group(1)
        self.assertRegex(job["spec"]["template"]["metadata"]["annotations"][key],
                         r"^[A-Za-z0-9._:+-]{1,128}$")
        mounts = {m["mountPath"]: m["name"] for m in train["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        probe_dir = os.path.dirname(env["CUDA_INJECTION64_PATH"])
        self.assertIn(probe_dir, mounts)
        (init,) = pod["initContainers"]
        self.assertEqual(init["command"][-1].rstrip("/"), probe_dir)
        self.assertIn(mounts[probe_dir], [m["name"] for m in init["volumeMounts"]])
        self.assertEqual(os.path.basename(init["command"][-2]),
                         os.path.basename(env["CUDA_INJECTION64_PATH"]))
        socket_volume = volumes[mounts[os.path.dirname(socket)]]
        self.assertEqual(socket_volume["hostPath"]["path"], os.path.dirname(socket))

    def test_daemonset_arguments_parse(self):
        """migscope accepts the DaemonSet's arguments: anything but exit 2 (bad input) will do
        here (3 without NVML or with the port taken; still serving after 3 s on a GPU host)."""
        with open(os.path.join(SOURCE, "deploy", "exporter-daemonset.yaml")) as f:
            (ds,) = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "DaemonSet"]
        (c,) = ds["spec"]["template"]["spec"]["containers"]
        args = [a.replace("$(NODE_NAME)", "gpu-node-1") for a in c["args"]]
        args[args.index("--listen") + 1] = "127.0.0.1:0"
        try:
            p = subprocess.run([MIGSCOPE, *args], capture_output=True, text=True, timeout=3)
            self.assertNotEqual(p.returncode, 2, p.stderr)
        except subprocess.TimeoutExpired:
            pass

    def test_dashboard_queries_only_exported_metrics(self):
        with open(os.path.join(SOURCE, "deploy", "grafana-dashboard.json")) as f:
            dashboard = json.load(f)
        exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
        self.assertGreaterEqual(len(exprs), 4)
        used = set()
        for e in exprs:
            used |= set(re.findall(r"\bmigscope_[a-z_]+", e))
        self.assertTrue(used)
        self.assertLessEqual(used, METRICS, used - METRICS)
        for needed in ("migscope_energy_joules_total", "migscope_gpu_power_watts",
                       "migscope_gpu_energy_joules_total"):
            self.assertIn(needed, used)

    def test_dashboard_filters_every_query_by_hostname(self):
        # The $hostname variable selects nodes: every selector of a migscope metric filters on
        # Hostname, which every exported series carries (test_exporter's
        # Exporter.EverySeriesCarriesTheHostname).
        with open(os.path.join(SOURCE, "deploy", "grafana-dashboard.json")) as f:
            dashboard = json.load(f)
        exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
        selectors = [m for e in exprs for m in re.findall(r"\bmigscope_[a-z_]+(?:\{[^}]*\})?", e)]
        self.assertGreaterEqual(len(selectors), 4)
        unfiltered = [m for m in selectors if 'Hostname=~"$hostname"' not in m]
        self.assertFalse(unfiltered, f"dashboard selectors without the Hostname filter: {unfiltered}")

    def test_scrape_config_targets_the_exporter_port(self):
        with open(os.path.join(SOURCE, "deploy", "prometheus-scrape.yml")) as f:
            config = yaml.safe_load(f)
        text = json.dumps(config)
        self.assertIn("9401", text)

    def test_dashboard_promql_parses(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool missing (Debian: prometheus)")
        with open(os.path.join(SOURCE, "deploy", "grafana-dashboard.json")) as f:
            dashboard = json.load(f)
        # Each query as a recording rule, Grafana's variables given values: promtool parses it.
        rules = []
        for p in dashboard["panels"]:
            for t in p.get("targets", []):
                expr = (t["expr"].replace("$__rate_interval", "1m").replace("$__range", "1h")
                        .replace("$hostname", ".*"))
                rules.append({"record": f"migscope:dashboard:{p['id']}_{t['refId']}",
                              "expr": expr})
        path = os.path.join(self.folder, "rules.yml")
        with open(path, "w") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
        p = subprocess.run([promtool, "check", "rules", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"{len(rules)} rules found", p.stdout)

    def test_scrape_config_promtool(self):
        promtool = shutil.which("promtool")
        if not promtool:
            self.skipTest("promtool missing (Debian: prometheus)")
        with open(os.path.join(SOURCE, "deploy", "prometheus-scrape.yml")) as f:
            config = yaml.safe_load(f)
        path = os.path.join(self.folder, "prometheus.yml")
        with open(path, "w") as f:
            yaml.safe_dump(config, f)
        p = subprocess.run([promtool, "check", "config", path], capture_output=True, text=True)
        if p.returncode != 0 and "field kubernetes_sd_configs not found" in p.stdout + p.stderr:
            # Debian builds Prometheus without Kubernetes discovery: check the rest without it.
            for job in config["scrape_configs"]:
                job.pop("kubernetes_sd_configs", None)
            with open(path, "w") as f:
                yaml.safe_dump(config, f)
            p = subprocess.run([promtool, "check", "config", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_kubectl_decodes_every_object(self):
        kubectl = shutil.which("kubectl")
        if not kubectl:
            self.skipTest("kubectl missing (Debian: kubernetes-client; ./build.sh test installs it)")
        env = dict(os.environ, KUBECONFIG=os.path.join(self.folder, "no-kubeconfig"))
        for path in self.files:
            # --local: no server. kubectl reads every object of the stream, needs apiVersion,
            # kind and metadata, and checks the label it sets.
            p = subprocess.run([kubectl, "label", "--local", "-f", path, "migscope-check=ok",
                                "-o", "name"], capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, f"{path}: {p.stderr}")
            with open(path) as f:
                count = len([d for d in yaml.safe_load_all(f) if d])
            self.assertEqual(len(p.stdout.split()), count, p.stdout)
        # The node labels of a plan, set the way the plan says, pass kubectl's label check.
        node = os.path.join(self.folder, "node.yaml")
        with open(node, "w") as f:
            f.write("apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-node\n")
        for path in self.files:
            with open(path) as f:
                for name in re.findall(r"nvidia\.com/mig\.config=(\S+)", f.read()):
                    p = subprocess.run([kubectl, "label", "--local", "-f", node,
                                        "nvidia.com/mig.config=" + name, "-o", "yaml"],
                                       capture_output=True, text=True, env=env)
                    self.assertEqual(p.returncode, 0, p.stderr)

    def test_kubernetes_schemas(self):
        extra = os.environ.get("MIGSCOPE_KUBERNETES_VALIDATE", "")
        env = dict(os.environ)
        if extra:
            env["PYTHONPATH"] = extra + os.pathsep + env.get("PYTHONPATH", "")
        probe = subprocess.run([sys.executable, "-c", "import kubernetes_validate"], env=env,
                               capture_output=True)
        if probe.returncode != 0:
            self.skipTest("kubernetes-validate missing (pip; ./build.sh test installs it into "
                          "the dependency cache)")
        # --strict: unknown fields are errors. The ServiceMonitor is a CRD the schemas lack.
        files = [f for f in self.files if not f.endswith("servicemonitor.yaml")]
        p = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict",
                            "--kubernetes-version", "1.30", *files],
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("ERROR", p.stdout)


if __name__ == "__main__":
    MIGSCOPE, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"])
