"""numpy-slice -> SliceInfo helper. Owned by the slice issue; stub until it lands."""


def slice_infos(src_shape, index, dst_shape=None):
    raise NotImplementedError
