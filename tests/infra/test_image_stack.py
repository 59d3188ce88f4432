"""The image stack (``image.<project>``) and the run stacks that pull from it, under Pulumi's mocks: the repository
and its cleanup policies, the staging bucket, a build per variant named by the context's digest; a run stack reads the
built digests through a StackReference and its Jobs pull ``@sha256:``; a named image skips all of it; node pools
stream images."""

from __future__ import annotations

from typing import Any

import pytest
from infra_testkit import PROJECT, REGION, containers, experiment, in_mode, jobs, plan_for, stack_config

from infra import image
from infra.image_choice import current_context
from infra.image_program import image_settings_from_config
from infra.plan import plan_stack
from trainer.kernel.config_keys import IMAGE_KEY, IMAGE_STACK_KEY, IMAGES_KEY
from trainer.kernel.errors import InvalidInput, TfcliError

IMAGE_STACK = image.image_stack_name(PROJECT)
REPOSITORY = f"{REGION}-docker.pkg.dev/{PROJECT}/tfcli/trainer"
DYNAMIC = "pulumi-python:dynamic:Resource"


def image_config(**images: Any) -> dict[str, Any]:
    return {IMAGES_KEY: images, "gcp:project": PROJECT, "gcp:region": REGION}


def test_the_image_stack_declares_the_repository_the_bucket_and_a_build_per_variant() -> None:
    plan = plan_stack(image_config(), stack=IMAGE_STACK)
    (repository,) = plan.of_type("gcp:artifactregistry/repository:Repository")
    assert repository.inputs["format"] == "DOCKER" and repository.inputs["repositoryId"] == "tfcli"
    assert repository.inputs["location"] == REGION
    policies = {p["id"]: p for p in repository.inputs["cleanupPolicies"]}
    assert policies["keep-in-use"]["action"] == "KEEP"
    assert policies["keep-in-use"]["condition"]["tagPrefixes"] == [current_context()]
    assert policies["keep-newest"]["mostRecentVersions"]["keepCount"] == 5
    assert policies["delete-old"]["action"] == "DELETE" and repository.inputs["cleanupPolicyDryRun"] is False
    (bucket,) = plan.of_type("gcp:storage/bucket:Bucket")
    assert bucket.inputs["name"] == image.build_bucket(PROJECT) and "google" not in bucket.inputs["name"]
    builds = {b.inputs["variant"]: b for b in plan.of_type(DYNAMIC)}
    assert set(builds) == {"cpu", "gpu"}
    for variant, build in builds.items():
        assert build.inputs["image"] == f"{REPOSITORY}:{current_context()}-{variant}"
        assert {"trainer-repository", "trainer-builds"} <= set(build.dependencies)
    assert plan.outputs["context"] == current_context()
    assert set(plan.outputs["images"]) == {"cpu", "gpu", "context"}
    assert all("@sha256:" in plan.outputs["images"][v] for v in ("cpu", "gpu"))


def test_the_image_stack_takes_its_variants_and_how_many_to_keep() -> None:
    plan = plan_stack(image_config(variants=["cpu"], keep_newest=2), stack=IMAGE_STACK)
    assert [b.inputs["variant"] for b in plan.of_type(DYNAMIC)] == ["cpu"]
    (repository,) = plan.of_type("gcp:artifactregistry/repository:Repository")
    assert {p["id"]: p for p in repository.inputs["cleanupPolicies"]}["keep-newest"]["mostRecentVersions"] == {
        "keepCount": 2
    }


@pytest.mark.parametrize(
    ("images", "message"),
    [({"variants": ["tpu"]}, "tfcli:images.variants: expected a list of cpu, gpu"),
     ({"keep_newest": 0}, "tfcli:images.keep_newest: expected a whole number"),
     ({"keep": 3}, "tfcli:images.keep: unknown key")],
)  # fmt: skip
def test_a_mistake_in_the_image_stack_names_the_file_and_key(images: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=f"Pulumi.{IMAGE_STACK}.yaml: {message}"):
        image_settings_from_config(image_config(**images), stack=IMAGE_STACK)


def test_a_run_stack_pulls_the_built_trainer_by_digest_through_a_stack_reference() -> None:
    plan = plan_for(stack_config(in_mode("cartpole-ppo", "distributed"), **{IMAGE_STACK_KEY: IMAGE_STACK}))
    assert [r for r in plan.of_type("pulumi:pulumi:StackReference") if r.inputs["name"] == IMAGE_STACK]
    images = {c["image"] for job in jobs(plan).values() for c in containers(job)}
    assert images and all(name.startswith(f"{REPOSITORY}@sha256:") for name in images)
    assert plan.outputs["image"] == f"{REPOSITORY}:{current_context()}-cpu"  # the manifests' name, by context


def test_the_job_names_change_with_the_trainers_context() -> None:
    """A changed trainer is a new Job (its name carries the image's tag), as a changed spec is."""
    spec = experiment("cartpole-ppo")
    with_stack = plan_for(stack_config(spec, **{IMAGE_STACK_KEY: IMAGE_STACK}))
    released = plan_for(stack_config(spec))
    assert {j.inputs["metadata"]["name"] for j in jobs(with_stack).values()}.isdisjoint(
        {j.inputs["metadata"]["name"] for j in jobs(released).values()}
    )


def test_a_named_image_skips_the_image_stack() -> None:
    plan = plan_for(
        stack_config(experiment("cartpole-ppo"), **{IMAGE_KEY: "ghcr.io/me/trainer:1", IMAGE_STACK_KEY: IMAGE_STACK})
    )
    assert not [r for r in plan.of_type("pulumi:pulumi:StackReference") if r.inputs["name"] == IMAGE_STACK]
    assert {c["image"] for job in jobs(plan).values() for c in containers(job)} == {"ghcr.io/me/trainer:1"}


def test_an_image_stack_built_from_another_source_is_refused() -> None:
    stale = {"context": "0" * 16, "cpu": f"{REPOSITORY}@sha256:{'1' * 64}", "gpu": f"{REPOSITORY}@sha256:{'2' * 64}"}
    with pytest.raises(TfcliError, match="tfcli image build"):
        plan_stack(stack_config(experiment("cartpole-ppo"), **{IMAGE_STACK_KEY: IMAGE_STACK}),
                   stack="stale", shared_outputs={IMAGE_STACK: {"images": stale}})  # fmt: skip


def test_node_pools_stream_images() -> None:
    plan = plan_for(stack_config(experiment("cartpole-ppo")))
    pools = plan.of_type("gcp:container/nodePool:NodePool")
    assert pools and all(p.inputs["nodeConfig"]["gcfsConfig"] == {"enabled": True} for p in pools)
    assert all(p.inputs["nodeConfig"]["imageType"] == "COS_CONTAINERD" for p in pools)  # streaming needs it


def test_the_projects_packages_are_a_layer_on_each_variant(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the program runs in the project's root
    (tmp_path / "requirements.txt").write_text("gym-minigrid==1.2.2\n")
    plan = plan_stack(image_config(requirements="requirements.txt"), stack=IMAGE_STACK)
    builds = {b.name: b for b in plan.of_type(DYNAMIC)}
    assert set(builds) == {"trainer-cpu", "trainer-gpu", "trainer-cpu-layer", "trainer-gpu-layer"}
    layer = builds["trainer-gpu-layer"]
    assert "trainer-gpu" in layer.dependencies and layer.inputs["base"].startswith(f"{REPOSITORY}@sha256:")
    assert layer.inputs["image"] == f"{REPOSITORY}:{current_context()}-{plan.outputs['layer']}-gpu"
    assert plan.outputs["tags"]["gpu"] == layer.inputs["image"]
    with pytest.raises(InvalidInput, match=r"tfcli:images.requirements: .*missing.txt is not a file"):
        plan_stack(image_config(requirements="missing.txt"), stack=IMAGE_STACK)


def test_the_component_a_repository_is_adopted_under_has_the_urn_tfcli_names() -> None:
    """tfcli's ``pulumi import --parent`` for a repository made by hand (tfcli/gke/image_stack.py) names the
    component by the URN the program gives it."""
    from infra.image_program import component_urn

    (component,) = plan_stack(image_config(), stack=IMAGE_STACK).of_type("tfcli:infra:TrainerImages")
    assert component.urn == component_urn(IMAGE_STACK, component.urn.split("::")[1])
    (repository,) = plan_stack(image_config(), stack=IMAGE_STACK).of_type("gcp:artifactregistry/repository:Repository")
    assert repository.urn.endswith(
        "tfcli:infra:TrainerImages$gcp:artifactregistry/repository:Repository::trainer-repository"
    )
