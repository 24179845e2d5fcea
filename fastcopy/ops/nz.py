"""ND2NZ / NZ2ND planners (spec 5, 6). Owned by the ND<->NZ issue; stub until it lands."""


def plan_nd2nz(dst, src, params, small_c0=False):
    raise NotImplementedError("DataCopy(Nd2NzParams) is not implemented yet")


def plan_nz2nd(dst, src, params):
    raise NotImplementedError("DataCopy(Nz2NdParamsFull) is not implemented yet")
