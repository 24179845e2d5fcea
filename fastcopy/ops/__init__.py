"""One planner per op family. Each validates a call and returns a cached :class:`fastcopy.dma.lower.Plan`."""
