# A stand-in for torch in the parity venv. tinker-cookbook's renderers use torch only to hold 1-D loss-weight
# vectors (torch.tensor / cat / zeros / full); PyPI's x86_64 torch wheel needs ~3 GB of CUDA wheels to import, so
# the parity venv uses this list-backed subset instead. Weights are compared as numbers, so the values are what
# real tensors would hold; anything else from torch raises AttributeError (and would show in the parity run).
__version__ = "0.0+parity-stub"
int64 = "int64"
float32 = "float32"


class Tensor(list):
    @property
    def dtype(self):
        return int64 if all(isinstance(x, int) and not isinstance(x, bool) for x in self) else float32

    def tolist(self):
        return list(self)

    def __getitem__(self, i):
        r = list.__getitem__(self, i)
        return Tensor(r) if isinstance(i, slice) else r


def tensor(data, dtype=None):
    return Tensor(float(x) for x in data) if dtype == float32 else Tensor(data)


def cat(ts):
    return Tensor(x for t in ts for x in t)


def zeros(n):
    return Tensor([0.0] * int(n))


def full(shape, v):
    n = shape[0] if isinstance(shape, (tuple, list)) else shape
    return Tensor([v] * int(n))
