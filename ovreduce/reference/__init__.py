"""NumPy reference semantics of the Reduce* layers: OpenVINO, ONNX, oneDNN Graph and quantized ReduceMean."""
