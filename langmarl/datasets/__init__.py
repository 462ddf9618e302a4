"""Problems for text environments: ``DataPoint``, ``StaticDataset``, ``BaseGenerator``."""

from langmarl.datasets.generator import BaseGenerator
from langmarl.datasets.models import DataPoint
from langmarl.datasets.static import StaticDataset

__all__ = ["BaseGenerator", "DataPoint", "StaticDataset"]
