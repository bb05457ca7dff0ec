mod postgres;
