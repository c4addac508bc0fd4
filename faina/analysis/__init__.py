"""Looking at the data and its disagreement: corpus statistics, inter-annotator agreement, plots, the disagreement page."""
