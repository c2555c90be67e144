"""Private compiled kernels (Cython drivers over csrc/fastisa/*.h).

Public code imports these through fastisa's front-end modules; names here may change.
"""
