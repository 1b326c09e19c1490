"""The lessons' figures: one module per lesson (``lesson_17_01.py``, ...), drawn by ``render``.

Every number comes from the reference implementation (``minimodel`` with
``MINIMODEL_IMPL=reference``, set by ``core``) or from the recorded results in
``benchmarks/results/``; nothing is drawn by hand or committed as an image.
"""
