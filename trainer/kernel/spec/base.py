"""Shared pydantic configuration and small field types for every spec model."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

# Kubernetes object names, GKE cluster names and Pulumi stack names all accept this; 40 characters leaves room
# for the suffixes infra adds (``-gpu``, ``-learner``, ...) under GKE's 40-character cluster-name limit.
_DNS_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME_LENGTH = 40


def check_dns_name(value: str) -> str:
    """Accept a lowercase DNS label (what Kubernetes, GKE and Pulumi stack names all accept)."""
    if len(value) > MAX_NAME_LENGTH:
        raise ValueError(f"'{value}' is {len(value)} characters long; names are at most {MAX_NAME_LENGTH}")
    if not _DNS_NAME.match(value):
        suggestion = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
        if suggestion and not suggestion[0].isalpha():
            suggestion = "x-" + suggestion
        hint = f" (for example '{suggestion}')" if suggestion else ""
        raise ValueError(
            f"'{value}' is not a valid name: use lowercase letters, digits and '-', starting with a letter{hint}"
        )
    return value


DnsName = Annotated[str, AfterValidator(check_dns_name)]


class StrictModel(BaseModel):
    """Unknown keys are errors (they get a did-you-mean from the loader); models are immutable once valid."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False)


class OpenModel(BaseModel):
    """A TensorForce or gymnasium spec: its own keys pass through to the library that owns them."""

    model_config = ConfigDict(extra="allow", frozen=True)


def raise_problems(title: str, problems: list[tuple[tuple[str | int, ...], str]]) -> None:
    """Raise every cross-field problem at once, each at its own location (a no-op when there are none).

    A plain ``ValueError`` would report one problem at the model's own location; a ``ValidationError`` raised in a
    validator is merged by pydantic into the outer error with each location kept.
    """
    if problems:
        raise ValidationError.from_exception_data(
            title,
            [
                InitErrorDetails(type=PydanticCustomError("spec", message), loc=loc, input=None)
                for loc, message in problems
            ],
        )
