"""The exceptions tessel raises. The C++ side (python/src/errors.cpp) raises these classes."""


class Error(Exception):
    """A tessel error with a location: `file`, `line`, `column` (0 when unknown) and `message`.

    str(error) is the diagnostic as the command line prints it: "file:line:col: error: message",
    followed, for errors in tile IR text, by the offending line and a caret under the column.
    """

    def __init__(self, message, file="", line=0, column=0, text=None):
        super().__init__(text if text is not None else message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column


class CompileError(Error):
    """Bad tile IR text, a program the verifier rejects, or a kernel tessel cannot compile."""


class LaunchError(Error):
    """A call that cannot run: arguments that do not fit the kernel (count, dtype, rank, shape,
    divisibility facts, placement), a fault the interpreter finds, or a device error."""


class InternalError(RuntimeError):
    """A broken invariant inside tessel: a bug in tessel, please report it."""
