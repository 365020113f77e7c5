# Shop package.
