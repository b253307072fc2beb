"""A one-node Slurm cluster of its own, in a temporary directory: munged
with its own key and socket, slurmctld and slurmd with a generated
slurm.conf on free ports (proctrack/linuxproc and task/none: no systemd,
no cgroups), as the Slurm tests of ag-fanout start one
(tests/it/fanout_slurm.rs). slurmd must run as root to start tasks.

    with SlurmCluster(cpus=8) as c:
        subprocess.run(["sbatch", ...], env=dict(os.environ, SLURM_CONF=c.conf))
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sbin(name):
    for d in ("/usr/sbin", "/usr/bin", "/sbin"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def missing():
    """Why no cluster can start here, or None."""
    if os.geteuid() != 0:
        return "slurmd must run as root to start tasks"
    absent = [n for n in ("mungekey", "munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo") if _sbin(n) is None]
    if absent:
        return "not installed: " + ", ".join(absent) + " (scripts/test-setup installs slurmctld, slurmd, munge and slurm-client)"
    return None


class SlurmCluster:
    def __init__(self, cpus=8, extra=""):
        self.cpus = cpus
        self.extra = extra
        self.dir = None
        self.daemons = []

    @property
    def conf(self):
        return os.path.join(self.dir, "slurm.conf")

    def env(self, base):
        return dict(base, SLURM_CONF=self.conf)

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="ag-slurm-")
        p = lambda rel: os.path.join(self.dir, rel)  # noqa: E731
        for d in ("munge", "spool", "state"):
            os.mkdir(p(d))
        subprocess.run([_sbin("mungekey"), "--create", "--keyfile", p("munge/key")], check=True)
        self.daemons.append(
            subprocess.Popen(
                [_sbin("munged"), "--foreground", "--force", f"--key-file={p('munge/key')}", f"--socket={p('munge/socket')}",
                 f"--pid-file={p('munge/pid')}", f"--seed-file={p('munge/seed')}", f"--log-file={p('munge/log')}"],
                stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        )
        while not os.path.exists(p("munge/socket")):
            time.sleep(0.05)
        d = self.dir
        conf = f"""ClusterName=ag
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={p('munge/socket')}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={p('state')}
SlurmdSpoolDir={p('spool')}
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=300
{self.extra}NodeName=agnode NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory=4000 State=UNKNOWN
PartitionName=main Nodes=agnode Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.conf, "w") as f:
            f.write(conf)
        quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.daemons.append(subprocess.Popen([_sbin("slurmctld"), "-D", "-i", "-f", self.conf], **quiet))
        self.daemons.append(subprocess.Popen([_sbin("slurmd"), "-D", "-N", "agnode", "-f", self.conf], **quiet))
        start = time.time()
        while True:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env(os.environ), capture_output=True, text=True)
            if out.stdout.strip() == "idle":
                return self
            if time.time() - start > 60:
                self.__exit__(None, None, None)
                raise RuntimeError("the Slurm cluster did not come up: " + open(p("slurmctld.log")).read()[-2000:])
            time.sleep(0.1)

    def __exit__(self, *exc):
        env = self.env(os.environ)
        subprocess.run(["scancel", "--user", "root"], env=env, capture_output=True)
        start = time.time()
        while time.time() - start < 20:
            out = subprocess.run(["squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING,CONFIGURING"], env=env, capture_output=True)
            if not out.stdout:
                break
            time.sleep(0.1)
        for proc in reversed(self.daemons):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False
