print("capture: not yet built")
