"""Worker-side code: the TensorFlow / Keras implementations and the pure math the workers share.

Modules here import TensorFlow inside functions only, so the app can import the pure parts."""
