"""An experiment's results in its GCS bucket: what ``status``, ``--wait`` and ``download`` read.

The learner writes ``gs://<bucket>/<experiment>/`` (the bucket is mounted at ``/results``): ``result.json`` when
it ends or pauses, ``progress.jsonl`` (a line per finished episode) as it trains. Both are read here without
downloading the rest; ``download`` copies everything (:func:`tfcli.gke.download.download_prefix`).

Credentials: ``tfcli.yaml``'s ``credentials`` (application default credentials, or the service-account key in
``key_file``). ``STORAGE_EMULATOR_HOST`` (a local GCS emulator, as the tests use) needs none.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfcli.experiments.progress import ProgressReader
from tfcli.project import ProjectDir
from trainer.kernel.errors import TfcliError
from trainer.result_file import FILENAME, parse_result

RESULT_FILE = FILENAME  # the one reader of its content: trainer/result_file.py
PROGRESS_FILE = "progress.jsonl"


def _credentials_hint(project: ProjectDir) -> str:
    if project.settings.credentials == "key-file":
        return "check key_file in tfcli.yaml: the key may be revoked, or lack access to the bucket"
    return "run `gcloud auth application-default login` (or set credentials: key-file and key_file in tfcli.yaml)"


@contextlib.contextmanager
def gcs_errors(project: ProjectDir, what: str) -> Iterator[None]:
    """Credential and connection failures of Google's client as messages with a hint."""
    from google.api_core import exceptions
    from google.auth import exceptions as auth_exceptions

    try:
        yield
    except auth_exceptions.DefaultCredentialsError:
        raise TfcliError(f"cannot {what}: no Google Cloud credentials found", hint=_credentials_hint(project)) from None
    except auth_exceptions.RefreshError as error:
        raise TfcliError(
            f"cannot {what}: Google Cloud refused the credentials ({error})", hint=_credentials_hint(project)
        ) from None
    except auth_exceptions.TransportError as error:
        raise TfcliError(f"cannot {what}: Google Cloud cannot be reached ({error})") from None
    except exceptions.Forbidden as error:
        raise TfcliError(
            f"cannot {what}: permission denied ({error.message})", hint=_credentials_hint(project)
        ) from None
    except exceptions.GoogleAPICallError as error:
        raise TfcliError(f"cannot {what}: {error}") from None


def storage_client(project: ProjectDir) -> Any:
    """A ``google.cloud.storage.Client`` for the project's credentials."""
    from google.cloud import storage

    from tfcli.gke.stacks import key_file

    gcp_project = project.settings.gcp_project
    if os.environ.get("STORAGE_EMULATOR_HOST"):
        return storage.Client(project=gcp_project or "emulator")  # the client uses anonymous credentials then
    credentials = None
    if (path := key_file(project)) is not None:
        from google.oauth2 import service_account

        try:
            credentials = service_account.Credentials.from_service_account_file(str(path))
        except (ValueError, json.JSONDecodeError) as error:
            raise TfcliError(f"key_file {path} is not a service-account key: {error}") from None
    with gcs_errors(project, "read results from Cloud Storage"):
        return storage.Client(project=gcp_project, credentials=credentials)


def split_results_url(url: str) -> tuple[str, str]:
    """``gs://bucket/experiment/`` -> (``bucket``, ``experiment``)."""
    if not url.startswith("gs://"):
        raise TfcliError(f"not a results location: {url!r}")
    bucket, _, prefix = url.removeprefix("gs://").partition("/")
    return bucket, prefix.strip("/")


@dataclass
class RemoteResults:
    """One experiment's ``result.json`` and ``progress.jsonl`` in its bucket, read incrementally."""

    project: ProjectDir
    client: Any
    bucket: str
    prefix: str
    progress: ProgressReader = field(default_factory=lambda: ProgressReader(Path(PROGRESS_FILE)))

    def _blob(self, name: str) -> Any:
        return self.client.bucket(self.bucket).get_blob(f"{self.prefix}/{name}" if self.prefix else name)

    def result_blob(self) -> Any:
        """``result.json``'s object (None until the trainer writes one): its generation tells a new result apart."""
        with gcs_errors(self.project, f"read gs://{self.bucket}/{self.prefix}/{RESULT_FILE}"):
            return self._blob(RESULT_FILE)

    def result(self, blob: Any = None) -> dict[str, Any]:
        blob = blob if blob is not None else self.result_blob()
        if blob is None:
            return {}
        with gcs_errors(self.project, f"read gs://{self.bucket}/{self.prefix}/{RESULT_FILE}"):
            data = blob.download_as_bytes()
        return parse_result(data)

    def write(self, name: str, text: str) -> None:
        """Write ``name`` beside the run's results (what the trainer reads through the bucket's mount)."""
        with gcs_errors(self.project, f"write gs://{self.bucket}/{self.prefix}/{name}"):
            path = f"{self.prefix}/{name}" if self.prefix else name
            self.client.bucket(self.bucket).blob(path).upload_from_string(text)

    def poll(self) -> list[dict[str, Any]]:
        """The episodes finished since the last poll (only the new bytes of ``progress.jsonl`` are fetched)."""
        with gcs_errors(self.project, f"read gs://{self.bucket}/{self.prefix}/{PROGRESS_FILE}"):
            blob = self._blob(PROGRESS_FILE)
            if blob is None or blob.size is None:
                return []
            if blob.size < self.progress.offset:  # rewritten from scratch (a restart)
                self.progress = ProgressReader(Path(PROGRESS_FILE))
            if blob.size == self.progress.offset:
                return []
            data = blob.download_as_bytes(start=self.progress.offset)
        return self.progress.feed(data)


def remote_results(project: ProjectDir, outputs: dict[str, Any], client: Any = None) -> RemoteResults:
    """The results of the experiment stack with these outputs (``bucket``, ``experiment``)."""
    bucket = str(outputs.get("bucket") or "")
    prefix = str(outputs.get("experiment") or "")
    if "resultsUrl" in outputs:
        bucket, prefix = split_results_url(str(outputs["resultsUrl"]))
    if not bucket:
        raise TfcliError("the experiment's stack has no results bucket among its outputs")
    return RemoteResults(project, client if client is not None else storage_client(project), bucket, prefix)


def download_results(project: ProjectDir, remote: RemoteResults, destination: Path) -> bool:
    """Copy the run's objects (``gs://<bucket>/<prefix>/``) into ``destination``, only what changed; True when the
    bucket holds anything of it."""
    from tfcli.gke.download import download_prefix

    with gcs_errors(project, f"download gs://{remote.bucket}/{remote.prefix}/"):
        report = download_prefix(remote.client, remote.bucket, remote.prefix, destination)
    return bool(report.downloaded or report.unchanged)
