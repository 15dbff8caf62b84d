self.BUILTINS_EXTRA = "extra";
