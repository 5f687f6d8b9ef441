print("condition: not yet built")
