"""Migration from TF1 RNN cells to Keras 3 layers: the mapping (data), the converter, cuDNN eligibility, live checks.

Importing this package imports no TensorFlow: ``mapping`` and ``cudnn`` are pure; ``convert`` and ``checks`` import
TensorFlow/Keras inside their functions.
"""
