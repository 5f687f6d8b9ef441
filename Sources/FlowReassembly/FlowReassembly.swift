// FlowReassembly: see ../shared/GUIDE.md for this layer's role.
