"""A stand-in for torch in the parity generator: the cookbook's renderers use torch only to hold loss weights
(tensor, cat, zeros, full), so a list-backed tensor is enough to read the weights they compute."""


class Tensor(list):
    dtype = "float"

    def tolist(self):
        return list(self)

    def __getitem__(self, i):
        r = list.__getitem__(self, i)
        return Tensor(r) if isinstance(i, slice) else r


int64 = "int64"
float32 = "float32"


def tensor(data, dtype=None):
    return Tensor(data)


def cat(tensors):
    out = Tensor()
    for t in tensors:
        out.extend(t)
    return out


def zeros(n):
    return Tensor([0.0] * n)


def full(shape, value):
    return Tensor([value] * shape[0])
