"""Sliced DataCopy with SliceInfo (spec 7). Owned by the slice issue; stub until it lands."""


def plan_slice(dst, src, dst_info, src_info, dimValue=1):  # noqa: N803
    raise NotImplementedError("DataCopy(SliceInfo[]) is not implemented yet")
