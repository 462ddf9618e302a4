"""A Ray that langmarl starts runs its workers at niceness 0; a cluster it joins is left as it
is (the real paths: the placement driver test's local Ray, and the Ray jobs module joining
``$RAY_ADDRESS``)."""

from __future__ import annotations

from typing import Any

import pytest

from langmarl.core.ray_start import NICENESS_ENV_VAR, STARTED_HERE, init_ray

JOINING = "When connecting to an existing cluster, _system_config must not be provided."


class FakeRay:
    """``ray.init`` as far as its options go: refuses a ``_system_config`` when ``cluster``
    (a Ray it finds) exists, as Ray does before connecting."""

    def __init__(self, cluster: bool = False, error: str = JOINING) -> None:
        self.cluster, self.error = cluster, error
        self.calls: list[dict[str, Any]] = []

    def init(self, **options: Any) -> None:
        self.calls.append(options)
        if self.cluster and "_system_config" in options:
            raise ValueError(self.error)


@pytest.fixture(autouse=True)
def _no_user_niceness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NICENESS_ENV_VAR, raising=False)


@pytest.mark.parametrize("address", [None, "local"])
def test_a_ray_started_here_gets_niceness_0(address: str | None) -> None:
    ray = FakeRay()
    init_ray(ray, address, namespace="n")
    assert ray.calls == [{"address": address, "_system_config": STARTED_HERE, "namespace": "n"}]
    assert STARTED_HERE == {"worker_niceness": 0}


def test_none_that_finds_a_cluster_joins_it_as_it_is() -> None:
    ray = FakeRay(cluster=True)
    init_ray(ray, None, namespace="n")
    assert ray.calls[-1] == {"address": None, "namespace": "n"} and len(ray.calls) == 2


@pytest.mark.parametrize("address", ["auto", "10.0.0.5:6379", "ray://head:10001"])
def test_a_cluster_named_is_joined_without_a_system_config(address: str) -> None:
    ray = FakeRay(cluster=True)
    init_ray(ray, address)
    assert ray.calls == [{"address": address}]


def test_the_users_niceness_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NICENESS_ENV_VAR, "15")  # Ray reads it itself
    ray = FakeRay()
    init_ray(ray, None)
    assert ray.calls == [{"address": None}]


def test_other_refusals_are_not_taken_for_a_cluster() -> None:
    with pytest.raises(ValueError, match="bad namespace"):
        init_ray(FakeRay(cluster=True, error="bad namespace"), None)
    with pytest.raises(ValueError, match="existing cluster"):  # "local" never joins
        init_ray(FakeRay(cluster=True), "local")
