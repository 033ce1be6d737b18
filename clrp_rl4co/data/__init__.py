"""Instances, solutions, benchmark files and best-known values."""

from .bks import PrinsBKS, prins_bks
from .instance import (
    CAPACITY_TOLERANCE,
    CLRPInstance,
    instances_to_tensordict,
    tensordict_to_instances,
)
from .json_instance import read_json_instance, write_json_instance
from .prodhon import benchmarks_dir, prins_files, read_prodhon, write_prodhon
from .solution import CLRPSolution, CostBreakdown, Route

__all__ = [
    "CAPACITY_TOLERANCE",
    "CLRPInstance",
    "CLRPSolution",
    "CostBreakdown",
    "PrinsBKS",
    "Route",
    "benchmarks_dir",
    "instances_to_tensordict",
    "prins_bks",
    "prins_files",
    "read_json_instance",
    "read_prodhon",
    "tensordict_to_instances",
    "write_json_instance",
    "write_prodhon",
]
