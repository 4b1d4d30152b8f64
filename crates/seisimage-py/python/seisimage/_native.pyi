"""The native half of seisimage: the library's calls with numpy arrays and JSON text in and out."""

from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

__version__: str

class SeisimageError(Exception):
    """Any error seisimage reports."""

    exit_code: int
    key: Optional[str]
    source: Optional[str]
    line: Optional[int]
    column: Optional[int]

class JobError(SeisimageError):
    """A mistake in the job or the request (the command line exits 2)."""

class RunError(SeisimageError):
    """A run that failed (the command line exits 1)."""

def open(
    path: str, reading: str
) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_], str]: ...
def info(path: str, reading: str, text_header: bool = False, stats: bool = True) -> str: ...
def run(
    path: Optional[str],
    text: Optional[str],
    overrides: List[str],
    progress: Optional[Callable[[str, int, int], Any]] = None,
) -> str: ...
def validate(path: Optional[str], text: Optional[str], overrides: List[str]) -> str: ...
def migrate(
    data: npt.NDArray[np.float32],
    axes: str,
    live: Optional[npt.NDArray[np.bool_]],
    job: str,
    progress: Optional[Callable[[str, int, int], Any]] = None,
) -> Tuple[npt.NDArray[np.float32], str]: ...
def write_cube(data: npt.NDArray[np.float32], axes: str, path: str) -> None: ...
