"""A Python client of softwire's job service, written only from proto/job_service.proto.

It is what a user who did not write softwire writes: Debian's python3-grpcio and
python3-protobuf, and stubs generated from the project's protos with `protoc` and
`grpc_python_plugin` (generate_stubs below). docs/API.md walks through it.

    stubs = generate_stubs(proto_root="proto/..", out_dir="/tmp/stubs")
    client = JobClient("127.0.0.1:7070", stubs)
    job = client.submit(job_text, data_files={"data/x.npy": x_bytes})
    for event in client.watch(job.job_id):
        print(event)
    results = client.fetch_results(job.job_id)   # metrics, variables as numpy arrays, trace
"""

import importlib
import os
import subprocess
import sys
import uuid

import grpc
import numpy as np

# The protos a client needs, in import order; paths relative to the source root.
SERVICE_PROTOS = ["proto/tensor.proto", "proto/job.proto", "proto/jobs.proto",
                  "proto/job_service.proto"]


class Stubs:
    """The generated modules: messages (job_service_pb2, jobs_pb2, ...) and the service stub."""

    def __init__(self, out_dir):
        if out_dir not in sys.path:
            sys.path.insert(0, out_dir)
        self.tensor = importlib.import_module("proto.tensor_pb2")
        self.job = importlib.import_module("proto.job_pb2")
        self.jobs = importlib.import_module("proto.jobs_pb2")
        self.service = importlib.import_module("proto.job_service_pb2")
        self.grpc = importlib.import_module("proto.job_service_pb2_grpc")


def generate_stubs(source_root, out_dir, protoc="protoc", plugin="grpc_python_plugin"):
    """Runs protoc with the gRPC Python plugin over the service's protos into out_dir."""
    os.makedirs(os.path.join(out_dir, "proto"), exist_ok=True)
    open(os.path.join(out_dir, "proto", "__init__.py"), "a").close()
    plugin_path = plugin if os.path.sep in plugin else _which(plugin)
    subprocess.run([protoc, "--proto_path=" + source_root, "--python_out=" + out_dir,
                    "--grpc_python_out=" + out_dir,
                    "--plugin=protoc-gen-grpc_python=" + plugin_path] + SERVICE_PROTOS,
                   cwd=source_root, check=True)
    return Stubs(out_dir)


def _which(program):
    for directory in os.environ.get("PATH", "/usr/bin").split(os.pathsep):
        candidate = os.path.join(directory, program)
        if os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(program + " not found (Debian: protobuf-compiler-grpc)")


_NUMPY_TYPES = {1: np.float32, 2: np.int32}  # DataType: FLOAT32, INT32.


class JobClient:
    """One channel to a server; every call carries the token when there is one."""

    def __init__(self, address, stubs, token=None, root_certificate=None):
        self.stubs = stubs
        if root_certificate is None:
            self.channel = grpc.insecure_channel(address)
        else:
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificate)
            self.channel = grpc.secure_channel(address, credentials)
        self.service = stubs.grpc.JobServiceStub(self.channel)
        self.metadata = [("authorization", "Bearer " + token)] if token else []

    def close(self):
        self.channel.close()

    def list_devices(self):
        request = self.stubs.service.ListDevicesRequest()
        return self.service.ListDevices(request, metadata=self.metadata, timeout=10)

    def submit(self, job_text, file_name="job.pbtxt", data_files=None, steps=0, trace=False,
               idempotency_key=None):
        """Submits a job; returns (JobInfo, existing). data_files: {relative path: bytes}."""
        submission = self.stubs.jobs.JobSubmission(
            job_text=job_text, file_name=file_name,
            idempotency_key=idempotency_key or str(uuid.uuid4()))
        for path, content in (data_files or {}).items():
            submission.data_file.add(path=path, content=content)
        submission.settings.steps = steps
        submission.settings.trace = trace
        request = self.stubs.service.SubmitJobRequest(submission=submission)
        response = self.service.SubmitJob(request, metadata=self.metadata, timeout=60)
        return response.job, response.existing

    def watch(self, job_id, from_sequence=1, timeout=300):
        """Yields the job's events from from_sequence until its terminal event."""
        request = self.stubs.service.WatchJobRequest(job_id=job_id, from_sequence=from_sequence)
        for response in self.service.WatchJob(request, metadata=self.metadata, timeout=timeout):
            yield response.event

    def get_job(self, job_id):
        request = self.stubs.service.GetJobRequest(job_id=job_id)
        return self.service.GetJob(request, metadata=self.metadata, timeout=10).job

    def list_jobs(self):
        request = self.stubs.service.ListJobsRequest()
        return list(self.service.ListJobs(request, metadata=self.metadata, timeout=10).job)

    def cancel(self, job_id, reason=""):
        request = self.stubs.service.CancelJobRequest(job_id=job_id, reason=reason)
        return self.service.CancelJob(request, metadata=self.metadata, timeout=30).job

    def fetch_results(self, job_id, timeout=120):
        """Everything the job left: {"job", "steps", "variables" (name -> numpy array),
        "trace" (bytes), "trace_summary" (str)}, stitched from the stream's chunks."""
        request = self.stubs.service.FetchResultsRequest(job_id=job_id)
        results = {"job": None, "steps": [], "variables": {}, "trace": b"",
                   "trace_summary": ""}
        descriptions = {}
        buffers = {}
        trace = bytearray()
        for response in self.service.FetchResults(request, metadata=self.metadata,
                                                  timeout=timeout):
            part = response.WhichOneof("part")
            if part == "header":
                results["job"] = response.header.job
                for variable in response.header.variable:
                    descriptions[variable.name] = variable
                    buffers[variable.name] = bytearray(variable.bytes)
            elif part == "step":
                results["steps"].append(response.step)
            elif part == "variable":
                chunk = response.variable
                buffers[chunk.name][chunk.offset:chunk.offset + len(chunk.data)] = chunk.data
            elif part == "trace":
                chunk = response.trace
                trace[chunk.offset:chunk.offset + len(chunk.data)] = chunk.data
            elif part == "trace_summary":
                results["trace_summary"] = response.trace_summary
        for name, variable in descriptions.items():
            dtype = _NUMPY_TYPES[variable.desc.dtype]
            array = np.frombuffer(bytes(buffers[name]), dtype=np.dtype(dtype).newbyteorder("<"))
            results["variables"][name] = array.reshape(tuple(variable.desc.dims))
        results["trace"] = bytes(trace)
        return results
