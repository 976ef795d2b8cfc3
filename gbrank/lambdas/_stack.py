"""A scratch array on the stack, for a loop that gathers from a table and stores.

LLVM vectorises a table lookup (a gather) only in a loop where no store can write to the
table.  Two numba arrays may share memory, so a loop that gathers from one and stores
into another stays scalar.  A copy of the table in stack memory that never leaves the
function is provably apart from every other array, and the same loop vectorises.
"""

from __future__ import annotations

from llvmlite import ir
from numba import carray, njit, types
from numba.core import debuginfo
from numba.extending import intrinsic

#: The most float64 values a stack copy holds (32 KiB, far below any thread's stack).
STACK_DOUBLES = 4096


@intrinsic
def _stack_doubles(typingctx):
    """A pointer to STACK_DOUBLES float64 of the calling function's stack frame: one
    fixed-size allocation in its entry block (so a call inside a loop does not grow the
    stack), not initialised."""
    sig = types.CPointer(types.float64)()

    def codegen(context, builder, signature, args):
        with debuginfo.suspend_emission(builder), builder.goto_entry_block():
            block = builder.alloca(ir.ArrayType(ir.DoubleType(), STACK_DOUBLES))
        return builder.bitcast(block, ir.DoubleType().as_pointer())

    return sig, codegen


@njit(cache=True, inline="always")
def stack_copy(a):
    """A copy of the 1-d float64 array ``a`` (at most STACK_DOUBLES long) in the calling
    function's stack frame.  Inlined at numba's IR level, so the frame is the caller's;
    the copy lives as long as the caller's call."""
    out = carray(_stack_doubles(), (a.shape[0],))
    for k in range(a.shape[0]):
        out[k] = a[k]
    return out
