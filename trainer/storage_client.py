"""The trainer's Cloud Storage client: in a pod, the Kubernetes service account's Google identity (Workload
Identity, the sweep's bucket writer) through Application Default Credentials; with ``STORAGE_EMULATOR_HOST`` set
(the tests' GCS emulator), anonymous, as google-cloud-storage makes it then. Imported only by the commands that
talk to the bucket, never by ``run``."""

from __future__ import annotations

import os
from typing import Any


def bucket(name: str) -> Any:
    from google.cloud import storage

    if os.environ.get("STORAGE_EMULATOR_HOST"):
        return storage.Client(project="emulator").bucket(name)
    return storage.Client().bucket(name)
