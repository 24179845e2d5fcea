"""Array-level FRACTAL_NZ format functions (to_nz / from_nz) and Nd2NzParams / Nz2NdParamsFull helpers.
Owned by the ND<->NZ issue; stub until it lands."""


def to_nz(array, c0=None):
    raise NotImplementedError


def from_nz(array, shape, c0=None):
    raise NotImplementedError


def nd2nz_params(rows, cols, dtype):
    raise NotImplementedError


def nz2nd_params(rows, cols, dtype):
    raise NotImplementedError
