"""A trained model as something to use: fold and exported model folders, loading (one fold or an ensemble), prediction, raw-text tagging, export."""
