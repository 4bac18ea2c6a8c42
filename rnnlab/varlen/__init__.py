"""Variable-length sequences (issue 4).

- ``checks``: pure NumPy checks of what an implementation does past each row's length (outputs zero, state carried,
  final state = last real step's), an output-norm heatmap, and ``cudnn_mask_ok`` (Keras 3's cuDNN mask rule).
- ``padding``: pure batching strategies (pad_global, pad_batch, bucket, sort) and their wasted-step arithmetic.
- ``models``: small TF1 / Keras 3 runners returning per-step outputs and states for the checks (imports TensorFlow
  inside its functions only).

The experiments are ``rnnlab.experiments.varlen`` (semantics), ``.padding`` (cost) and ``.seed003`` (seed 003
reproduced). Importing this package imports no TensorFlow.
"""
