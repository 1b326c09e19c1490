"""The untrusted side of grading: code that runs inside the sandbox, next to student code.

Everything in this folder is copied into each submission's scratch folder and run there by the
sandbox's own Python; it never imports ``grader`` (which the sandbox cannot see) and it never
decides a grade. It only sets up the isolation, runs the student's functions on the inputs it is
given, and writes what came out as plain data (``.npy`` arrays and JSON). The trusted parent
(``grader.trusted.safe_io``, ``grader.trusted.verdicts``) reads those files with
``allow_pickle=False``, checks them and judges them against reference outputs the child never
sees.

- ``isolation``: namespaces, hidden folders, resource limits, unprivileged user.
- ``zygote``: preloads NumPy/PyTorch once, then forks one fresh, limited process per probe group.
- ``probe_runner``: calls the student's code on the hidden inputs and saves the outputs.
- ``kernel_jail``: a server that preloads PyTorch and ipykernel once, then forks each notebook's
  Jupyter kernel inside the same kind of sandbox (notebook labs).
- ``recorder``: the cell injected into that kernel to record values for judging outside it.
"""
